// File: models/calibration_fit_internal.h
//
// Private to models/calibration_fit*.cc: the rounding every fitted value gets
// before it is stored or written.
#ifndef CLUSTERSIM_MODELS_CALIBRATION_FIT_INTERNAL_H_
#define CLUSTERSIM_MODELS_CALIBRATION_FIT_INTERNAL_H_

namespace clustersim::models::calibration_fit_internal {

// Rounds a fitted value to 6 significant digits so that files diff cleanly.
double Round6(double v);

}  // namespace clustersim::models::calibration_fit_internal

#endif  // CLUSTERSIM_MODELS_CALIBRATION_FIT_INTERNAL_H_
