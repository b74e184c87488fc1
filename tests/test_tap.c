/* Tests of tap.h's groups, exercises and stubs: what a student handout relies on.
 *
 * Run with an argument, this file is a demo: a few groups that pass, fail, crash
 * or meet a stub (NOT_IMPLEMENTED, chapter 0), printing TAP. Run without one, it
 * runs each demo as a separate process and checks the TAP it printed, line by
 * line: the tests a stub stops fail when they are that exercise's and are
 * skipped otherwise, and the count of an exercise's tests never changes. */
#include "tensor.h"
#include "tap.h"
#include "run.h"

/* ---- the demos: each is a whole TAP stream ----------------------------- */

static void two_then_stub(void) {
    ok(1, "first");
    ok(1, "second");
    NOT_IMPLEMENTED("Exercise 9.1");
}

static void one_then_stub(const char *exercise) {
    ok(1, "before the stub");
    NOT_IMPLEMENTED(exercise);
}

/* A program stopped by a stub, run through run.h; then two tests that fail. */
static void program_stub_then_failures(void) {
    int status = run_program("/bin/sh", ARGS("-c", "echo 'p: x.md:3: not implemented yet: Exercise 9.1' >&2; exit 3"),
                             run_out, sizeof run_out, run_err, sizeof run_err);
    ok(status == 0, "the program ran");
    ok(0, "a test that needs its output");
}

/* A refusal (exit 1) is not a stub: a failure after it stays a failure. */
static void refusal_then_failure(void) {
    run_program("/bin/sh", ARGS("-c", "echo 'p: bad flag' >&2; exit 1"), run_out, sizeof run_out, run_err, sizeof run_err);
    ok(0, "a test that fails on its own");
}

/* A call into "chapter code" that reaches a stub inside STUDENT, then checks on
 * what it should have written: one that holds on the unwritten zeros, one that
 * fails, and two results compared that the stub left alike. */
static void fill_or_stub(float *out, const char *exercise) {
    out[0] = 1.0f;
    NOT_IMPLEMENTED(exercise);
}

static void student_then_checks(const char *exercise) {
    float a[2] = { 0, 0 }, b[2] = { 0, 0 };
    ok(1, "before the call");
    STUDENT(fill_or_stub(a, exercise));
    STUDENT(fill_or_stub(b, exercise));
    ok(a[1] == 0.0f, "a check that holds on what the stub left");
    ok(a[0] == 1.0f, "a check that fails on it");
    ok(a[0] == b[0], "two unwritten results agree");
}

static void passes(int n) {
    for (int i = 0; i < n; i++) ok(1, "passes %d", i + 1);
}

static int demo(const char *which) {
    if (!strcmp(which, "group")) {
        TEST_GROUP(two_then_stub());
        ok(1, "after the group");
    } else if (!strcmp(which, "own")) {
        EXERCISE("9.1", 3, one_then_stub("Exercise 9.1"));
    } else if (!strcmp(which, "other")) {
        EXERCISE("9.2", 2, one_then_stub("Exercise 9.1"));
    } else if (!strcmp(which, "program")) {
        TEST_GROUP(program_stub_then_failures());
    } else if (!strcmp(which, "refusal")) {
        TEST_GROUP(refusal_then_failure());
    } else if (!strcmp(which, "student-own")) {
        EXERCISE("9.1", 4, student_then_checks("Exercise 9.1"));
    } else if (!strcmp(which, "student-other")) {
        EXERCISE("9.2", 4, student_then_checks("Exercise 9.1"));
        TEST_GROUP(student_then_checks("Exercise 9.1"));
    } else if (!strcmp(which, "count")) {
        EXERCISE("9.1", 2, passes(1));
    } else if (!strcmp(which, "crash")) {
        TEST_GROUP(abort());
    } else if (!strcmp(which, "exercise-crash")) {
        EXERCISE("9.1", 2, (passes(1), abort()));
    } else if (!strcmp(which, "done")) {
        EXERCISE("9.1", 2, passes(2));
        TEST_GROUP(passes(1));
    }
    done_testing();
    return exit_status();
}

/* ---- the checks ----------------------------------------------------------- */

static const char *self;

/* Run demo `which`; its TAP is left in run_out. */
static int run_demo(const char *which) {
    return run_program(self, ARGS(which), run_out, sizeof run_out, run_err, sizeof run_err);
}

/* The TAP lines of run_out that are tests or the plan, joined by '|'. */
static const char *tap_lines_of_out(void) {
    static char joined[8192];
    size_t used = 0;
    joined[0] = '\0';
    for (char *line = run_out, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        if (!strncmp(line, "ok", 2) || !strncmp(line, "not ok", 6) || !strncmp(line, "1..", 3))
            used += (size_t)snprintf(joined + used, sizeof joined - used, "%s%.*s", used ? "|" : "", n, line);
    }
    return joined;
}

static void check(const char *which, int want_status, const char *want_lines, const char *err_part, const char *name) {
    int status = run_demo(which);
    char what[256];
    snprintf(what, sizeof what, "%s (exit status %d)", name, want_status);
    is_str(tap_lines_of_out(), want_lines, "%s", what);
    is_int(status, want_status, "%s: the exit status", name);
    if (err_part) like(run_err, err_part, "%s: the diagnostic names the exercise", name);
}

int main(int argc, char **argv) {
    if (argc > 1) {   /* a demo: its diagnostics on stderr, where check() reads them, or on stdout ("-stdout") */
        if (strcmp(argv[1], "refusal-stdout")) return unsetenv("ABH_TAP_DIAG"), demo(argv[1]);
        return setenv("ABH_TAP_DIAG", "stdout", 1), demo("refusal");
    }
    self = argv[0];
    check("group", 0,
          "ok 1 - first|ok 2 - second|ok 3 # skip the rest of two_then_stub() needs Exercise 9.1, not implemented yet|"
          "ok 4 - after the group|1..4",
          NULL, "a stub in a group: its tests so far count, the rest is one skipped test, the file goes on");
    check("own", 2,
          "ok 1 - Exercise 9.1: before the stub|not ok 2 - Exercise 9.1: test 2 of 3 in one_then_stub(\"Exercise 9.1\")|"
          "not ok 3 - Exercise 9.1: test 3 of 3 in one_then_stub(\"Exercise 9.1\")|1..3",
          "not implemented yet: Exercise 9.1 (its stub is still in the chapter",
          "an exercise stopped by its own stub: the tests not run fail, and there are still 3");
    check("other", 0,
          "ok 1 - Exercise 9.2: before the stub|"
          "ok 2 - Exercise 9.2: test 2 of 2 in one_then_stub(\"Exercise 9.1\") # SKIP needs Exercise 9.1, not implemented yet|1..2",
          NULL, "an exercise stopped by another exercise's stub is skipped: do that one first");
    check("program", 0,
          "ok 1 - the program ran # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 2 - a test that needs its output # SKIP needs Exercise 9.1, not implemented yet|1..2",
          NULL, "a program stopped by a stub: the failing tests after it in the group are skipped, naming it");
    check("student-own", 3,
          "ok 1 - Exercise 9.1: before the call|not ok 2 - Exercise 9.1: a check that holds on what the stub left|"
          "not ok 3 - Exercise 9.1: a check that fails on it|not ok 4 - Exercise 9.1: two unwritten results agree|1..4",
          "not implemented yet: Exercise 9.1",
          "a stub met inside STUDENT: every later test of its exercise runs under its own name, and fails");
    check("student-other", 0,
          "ok 1 - Exercise 9.2: before the call|"
          "ok 2 - Exercise 9.2: a check that holds on what the stub left # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 3 - Exercise 9.2: a check that fails on it # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 4 - Exercise 9.2: two unwritten results agree # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 5 - before the call|"
          "ok 6 - a check that holds on what the stub left # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 7 - a check that fails on it # SKIP needs Exercise 9.1, not implemented yet|"
          "ok 8 - two unwritten results agree # SKIP needs Exercise 9.1, not implemented yet|1..8",
          NULL, "another exercise's stub met inside STUDENT: every later test is skipped by name, even one that holds");
    check("refusal", 1, "not ok 1 - a test that fails on its own|1..1", NULL,
          "a program that exits 1 is not a stub: a failure after it is a failure");
    run_demo("refusal-stdout");
    like(run_out, "not ok 1 - a test that fails on its own\n#   Failed test 'a test that fails on its own'\n#   at ",
         "with ABH_TAP_DIAG=stdout a failure's diagnostics follow its line on stdout (what make check shows)");
    ok(!strstr(run_err, "Failed test"), "and none of them go to stderr");
    check("count", 1, "ok 1 - Exercise 9.1: passes 1|not ok 2 - Exercise 9.1: passes(1) ran 1 tests, not the 2 it declares|1..2",
          NULL, "an exercise that runs fewer tests than it declares fails");
    check("crash", 1, "not ok 1 - abort() ended early: exit status 134 (killed by a signal)|1..1", NULL,
          "a group that crashes is a failure, not a skip");
    check("exercise-crash", 1,
          "ok 1 - Exercise 9.1: passes 1|not ok 2 - Exercise 9.1: test 2 of 2 in (passes(1), abort()): the group ended early, "
          "exit status 134 (killed by a signal)|1..2",
          NULL, "an exercise that crashes fails the tests it did not run, under its own name");
    check("done", 0, "ok 1 - Exercise 9.1: passes 1|ok 2 - Exercise 9.1: passes 2|ok 3 - passes 1|1..3", NULL,
          "without stubs, groups and exercises are plain tests, numbered on");
    done_testing();
    return exit_status();
}
