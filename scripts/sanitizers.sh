# Sourced by check.sh and fuzz.sh: how the sanitized build runs.
# PoCL and LLVM keep memory until exit; our own leaks are still reported.
# use_tls=0: with glibc 2.36, LeakSanitizer reads a bogus dynamic-TLS range
# of PoCL's worker threads and crashes its tracer; ktlua keeps nothing in
# thread-local storage, and glibc's own thread-specific blocks are suppressed.
export LSAN_OPTIONS="use_tls=0:suppressions=$(pwd)/spec/support/lsan.supp:print_suppressions=0"
# allocator_may_return_null=1: an allocation larger than memory (kt.array of
# 2^53 doubles) fails as it does unsanitized, and its error is tested,
# rather than abort the process.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export KTLUA_SANITIZED=1
