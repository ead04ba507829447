# Helpers shared by every folder's CMakeLists.txt.

# clustersim_test(NAME SOURCE LIBS...): one GoogleTest binary per test file,
# registered with CTest under its own name.
function(clustersim_test name source)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE ${ARGN} GTest::gtest GTest::gtest_main GTest::gmock)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
    "CLUSTERSIM_SOURCE_DIR=${CMAKE_SOURCE_DIR};CLUSTERSIM_BINARY_DIR=${CMAKE_BINARY_DIR}")
endfunction()

# clustersim_benchmark(NAME SOURCE LIBS...): a Google Benchmark program (not a test).
function(clustersim_benchmark name source)
  if(CLUSTERSIM_BENCHMARKS)
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE ${ARGN} benchmark::benchmark benchmark::benchmark_main)
  endif()
endfunction()

# clustersim_embed(TARGET_VAR NAMESPACE_SYMBOL FILE): compiles FILE's bytes into a
# generated .cc defining `std::string_view SYMBOL()`; data files (GPU catalog,
# presets, calibration) travel inside the binary so it runs from any directory.
function(clustersim_embed out_var symbol file)
  get_filename_component(abs "${file}" ABSOLUTE)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cc")
  add_custom_command(
    OUTPUT "${gen}"
    COMMAND ${CMAKE_COMMAND} -DIN=${abs} -DOUT=${gen} -DSYMBOL=${symbol}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS "${abs}" ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${file}")
  set(${out_var} "${gen}" PARENT_SCOPE)
endfunction()
