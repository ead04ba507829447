// File: viz/pipeline_diagram.h
//
// The pipeline schedule as an inline SVG: one band per pipeline stage, drawn
// from the stage's lowest-numbered simulated GPU (its tensor- and
// data-parallel peers run the same schedule), with one row per stream of that
// GPU: compute (forward, backward and weight-gradient blocks per micro-batch,
// coloured by pass and shaded by micro-batch parity, labelled "F3" / "B3" /
// "W3" where wide enough; optimizer in red), then each communication stream
// (tp, dp, pp, ...) and the host launch stream if present. Idle compute time
// (the bubble, waits) shows as hatched gaps. A time axis in milliseconds runs
// below. Every block has a <title> tooltip.
//
// Drawing is bounded whatever the run size: consecutive spans of a row with
// the same pass, micro-batch and kind that touch within half a pixel are drawn
// as one block, and blocks under one pixel fold into the block before them
// when it is within half a pixel, so a row has at most about as many blocks
// as it has pixels.
//
// Example:
//   std::string svg = PipelineDiagramSvg(timeline);  // "<svg id=\"pipeline\" ..."
#ifndef CLUSTERSIM_VIZ_PIPELINE_DIAGRAM_H_
#define CLUSTERSIM_VIZ_PIPELINE_DIAGRAM_H_

#include <string>
#include <string_view>

#include "viz/timeline.h"

namespace clustersim::viz {

// An <svg id="pipeline"> element; deterministic for a given timeline. An
// empty timeline gives an SVG that says so.
std::string PipelineDiagramSvg(const Timeline& timeline);

// The fill colour of a span in the diagram and the legends ("#4c78a8").
std::string_view SpanColor(SpanPhase phase, SpanKind kind, int32_t microbatch);

// The legend of the diagram's colours, as HTML (class "legend").
std::string PipelineLegendHtml();

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_PIPELINE_DIAGRAM_H_
