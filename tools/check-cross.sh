#!/bin/sh
# check-cross.sh: check that the book builds and passes its tests on arm64, from
# an x86-64 machine (or any other: nothing here needs an arm64 processor).
#   1. aarch64-linux-gnu-gcc compiles, with -Werror, every tangled program
#      (build/src/*.c but tensor.c), tools/npy2dat.c, and every test binary
#      (tests/test_*.c, tests/teacher/test_*.c, the fuzz replay included) into
#      build/cross. The Makefile's own rules do it, run with CC and OUT changed,
#      so the flags (CFLAGS, each program's CFLAGS_NAME and LDLIBS_NAME from
#      mk/*.mk, the tests' -DTESTING and link flags) are the native build's and
#      cannot drift from it. Each result must be an AArch64 executable.
#   2. qemu-user runs the test binaries through prove, and the programs they
#      run through ABH_WRAP (tests/run.h), all of them arm64 code. No binfmt
#      handler is needed: qemu is named on each command line.
#   3. tests/transcripts_test.lua runs the chapters' shell sessions with the
#      arm64 programs, under qemu: they must print what the book shows.
# tests/test_tap.c is compiled but not run: it runs /bin/sh through run.h,
# and with ABH_WRAP set to qemu-aarch64 that would be qemu running an x86-64
# shell, which it cannot.
# Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user: installed
# with apt-get when we are root, otherwise one line says what to install.
# CROSS_CC and QEMU name other commands for the compiler and the emulator.
# The first problem stops the check with a non-zero exit, its output shown.
set -u
make=${MAKE:-make}
cross_cc=${CROSS_CC:-aarch64-linux-gnu-gcc}
qemu=${QEMU:-qemu-aarch64}
sysroot=/usr/aarch64-linux-gnu       # Debian's arm64 libc for cross compilers
out=build/cross
jobs=$(nproc 2>/dev/null || echo 2)
fail() { echo "check-cross: $*" >&2; exit 1; }
# Run from make -jN, MAKEFLAGS names a jobserver that this script's make cannot
# join (it would warn, and run one job at a time): leave it out, and use -j$jobs.
MAKEFLAGS=$(printf '%s\n' "${MAKEFLAGS:-}" | sed 's/ -j[0-9]*//; s/ --jobserver-[a-z]*=[^ ]*//')
export MAKEFLAGS

# ---- the tools: the compiler, arm64's libc headers (only recommended by
# gcc-aarch64-linux-gnu, so --no-install-recommends leaves them out), qemu.
missing_packages() {
  command -v "$cross_cc" >/dev/null 2>&1 || printf ' gcc-aarch64-linux-gnu'
  [ -f "$sysroot/include/stdio.h" ] || printf ' libc6-dev-arm64-cross'
  command -v "$qemu" >/dev/null 2>&1 || printf ' qemu-user'
}
missing=$(missing_packages)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "  APT    installing$missing (to cross-compile for arm64 and run it)"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $missing >/dev/null; } ||
      fail "apt-get install$missing failed"
    missing=$(missing_packages)
    [ -z "$missing" ] || fail "still missing after apt-get install:$missing (is CROSS_CC or QEMU set to another command?)"
  else
    fail "cross-compiling for arm64 needs packages that are missing: install them with: sudo apt-get install$missing"
  fi
fi

# ---- 1. compile. The first make tangles the chapters (the normal build's
# rule) and compiles tensor.o; then build/src holds every program to compile.
# MODE=release: the flags readers build with (ASan has no place under qemu);
# -k: every program that fails to compile is shown, not only the first.
# -s: no "is up to date" for each one already built; but V=1 (given to make
# check-cross, or set in the environment) shows the commands, as make does.
quiet=-s
case " ${MAKEFLAGS} V=${V:-0}" in *" V=1"*) quiet= ;; esac
cross_make() {
  $make $quiet -k --no-print-directory -j"$jobs" MODE=release OUT="$out" CC="$cross_cc" "$@" ||
    fail "$cross_cc could not build the book for arm64: the errors are above (V=1 shows the commands: make V=1 MODE=release OUT=$out CC=$cross_cc TARGET)"
}
printf '  %-7s %s\n' CROSS "$cross_cc, the Makefile's rules and flags, into $out"
cross_make "$out/obj/tensor.o"

programs=$(for f in build/src/*.c; do n=$(basename "$f" .c); [ "$n" = tensor ] || echo "$out/bin/$n"; done)
tests=$(for f in tests/test_*.c; do n=$(basename "$f" .c); echo "$out/tests/${n#test_}"; done)
teacher=$(for f in tests/teacher/test_*.c; do n=$(basename "$f" .c); echo "$out/tests/teacher/${n#test_}"; done)
# shellcheck disable=SC2086
cross_make $programs "$out/bin/npy2dat" $tests $teacher

# Each one must be an AArch64 ELF file (e_machine, at byte 18, is 183): a
# make that silently used the native compiler would not pass.
for f in $programs "$out/bin/npy2dat" $tests $teacher; do
  [ -f "$f" ] || fail "$f was not built"
  [ "$(od -An -tu1 -j18 -N1 "$f" | tr -d ' ')" = 183 ] || fail "$f is not an AArch64 executable"
done
printf '  %-7s %s\n' CROSS "$(echo "$programs" | wc -w) programs and npy2dat, $(echo "$tests" "$teacher" | wc -w) test binaries: AArch64, -Werror clean"

# ---- 2. run the tests under qemu: the test binaries by prove -e, the
# programs they start by ABH_WRAP (tests/run.h splits it at spaces).
# --failures: a failed test's line is shown, not only its number.
run_tests=$(for t in $tests $teacher; do [ "$t" = "$out/tests/tap" ] || echo "$t"; done)
wrap="$qemu -L $sysroot"
printf '  %-7s %s\n' PROVE "$(echo "$run_tests" | wc -w) test binaries under $wrap (all but tap)"
# shellcheck disable=SC2086
ABH_BIN=$out/bin ABH_WRAP=$wrap ${PROVE:-prove} --norc --failures -j"$jobs" -e "$wrap" $run_tests ||
  fail "a test failed under $wrap (prove's report is above; run one again with: ABH_BIN=$out/bin ABH_WRAP='$wrap' $wrap $out/tests/NAME)"

# ---- 3. the chapters' sessions, run with the arm64 programs (the script is
# the host's lua5.4; only the programs it starts go under qemu).
printf '  %-7s %s\n' PROVE "tests/transcripts_test.lua: the chapters' sessions, the programs under qemu"
ABH_BIN=$out/bin ABH_WRAP=$wrap ${PROVE:-prove} --norc --failures -e '' tests/transcripts_test.lua ||
  fail "tests/transcripts_test.lua failed with the arm64 programs (the failed tests are above; make test shows whether it fails natively too)"
echo "check-cross: every program and test compiles for arm64 with -Werror; the tests and the chapters' sessions pass under qemu"
