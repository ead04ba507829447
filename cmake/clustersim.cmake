# Helpers shared by every folder's CMakeLists.txt.

# clustersim_test(NAME SOURCE LIBS...): one GoogleTest binary per test file,
# registered with CTest under its own name.
function(clustersim_test name source)
  add_executable(${name} ${source})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
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

# clustersim_proto_library(NAME PROTO... [DEPS LIB...]): compiles the folder's
# .proto files (paths relative to the calling CMakeLists.txt) into one library.
# Generated headers sit at the same relative path under the build tree
# ("models/proto/catalog.pb.h"); DEPS are the proto libraries they import.
function(clustersim_proto_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  set(srcs)
  foreach(proto ${ARG_UNPARSED_ARGUMENTS})
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
    get_filename_component(dir ${rel} DIRECTORY)
    get_filename_component(stem ${rel} NAME_WE)
    set(out_cc ${PROJECT_BINARY_DIR}/${dir}/${stem}.pb.cc)
    set(out_h ${PROJECT_BINARY_DIR}/${dir}/${stem}.pb.h)
    add_custom_command(
      OUTPUT ${out_cc} ${out_h}
      COMMAND protobuf::protoc --proto_path=${PROJECT_SOURCE_DIR} --cpp_out=${PROJECT_BINARY_DIR}
              ${abs}
      DEPENDS ${abs} protobuf::protoc
      COMMENT "protoc ${rel}")
    list(APPEND srcs ${out_cc})
  endforeach()
  add_library(${name} ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -Wno-unused-parameter)
endfunction()
