# CTest sweep_mpi_test: `mpirun -np 2 clustersim sweep` writes the same bytes
# (CSV, JSON lines) and prints the same summary and Pareto front as one
# process; a killed run (a partial file ending in a torn line) resumes under
# 3 ranks without redoing its points; a bad --output fails on rank 0 without
# hanging the workers.
# Usage: cmake -DCLUSTERSIM=bin -DMPIEXEC=mpirun -DSWEEP=file -DWORK=dir -P sweep_mpi_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Containers run tests as root; Open MPI refuses that unless told.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)

function(sweep out_var prefix)  # ARGN: the mpirun arguments before the binary, if any
  execute_process(COMMAND ${ARGN} "${CLUSTERSIM}" sweep "${SWEEP}" --output "${WORK}/${prefix}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sweep --output ${prefix} (${ARGN}) exited ${rc}:\n${out}\n${err}")
  endif()
  string(REPLACE "${WORK}/${prefix}" "PREFIX" out "${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect_same_files a b)
  foreach(ext csv jsonl)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/${a}.${ext}"
                            "${WORK}/${b}.${ext}" RESULT_VARIABLE differ)
    if(differ)
      message(FATAL_ERROR "${b}.${ext} differs from ${a}.${ext} (the one-process run)")
    endif()
  endforeach()
endfunction()

set(MPI_RUN "${MPIEXEC}" --oversubscribe)
sweep(one_out one)
sweep(mpi_out mpi ${MPI_RUN} -np 2)
expect_same_files(one mpi)
if(NOT one_out STREQUAL mpi_out)
  message(FATAL_ERROR "summaries differ:\none process:\n${one_out}\nmpirun -np 2:\n${mpi_out}")
endif()
string(REGEX MATCH "0 already done, ([0-9]+) run" ran "${one_out}")
if(NOT ran OR CMAKE_MATCH_1 LESS 4)
  message(FATAL_ERROR "expected a sweep of at least 4 points, got:\n${one_out}")
endif()
set(total ${CMAKE_MATCH_1})

# Killed after 3 points, mid-way through writing the 4th JSON line.
file(STRINGS "${WORK}/one.jsonl" json_lines)
file(STRINGS "${WORK}/one.csv" csv_lines)
set(kept_json "")
set(kept_csv "")
foreach(i RANGE 0 2)
  list(GET json_lines ${i} line)
  string(APPEND kept_json "${line}\n")
endforeach()
foreach(i RANGE 0 3)  # the header and 3 rows
  list(GET csv_lines ${i} line)
  string(APPEND kept_csv "${line}\n")
endforeach()
list(GET json_lines 3 torn)
string(SUBSTRING "${torn}" 0 20 torn)
file(WRITE "${WORK}/resumed.jsonl" "${kept_json}${torn}")
file(WRITE "${WORK}/resumed.csv" "${kept_csv}")
sweep(resumed_out resumed ${MPI_RUN} -np 3)
math(EXPR rest "${total} - 3")
if(NOT resumed_out MATCHES "3 already done, ${rest} run")
  message(FATAL_ERROR "the resumed run should skip 3 points and run ${rest}:\n${resumed_out}")
endif()
expect_same_files(one resumed)

# Rank 0 cannot write: a clear error, a non-zero exit, no hung workers.
execute_process(COMMAND ${MPI_RUN} -np 2 "${CLUSTERSIM}" sweep "${SWEEP}" --output
                        "${WORK}/missing-folder/x"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT err MATCHES "cannot write")
  message(FATAL_ERROR "an unwritable --output should fail with \"cannot write\"; got ${rc}:\n${err}")
endif()
message(STATUS "mpirun sweeps match the one-process run (${total} points)")
