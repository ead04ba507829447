# Writes OUT, a C++ file defining `std::string_view clustersim::embedded::SYMBOL()`
# that returns the bytes of IN. Run with cmake -P.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
math(EXPR nbytes "${len} / 2")
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\n#include <string_view>\nnamespace clustersim::embedded {\nstatic const char kData[] = {${body} '\\0'};\nstd::string_view ${SYMBOL}() { return std::string_view(kData, ${nbytes}); }\n}  // namespace clustersim::embedded\n")
