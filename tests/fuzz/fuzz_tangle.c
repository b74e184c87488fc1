/* fuzz_tangle.c: the tangler (tangle/tangle.lua) on arbitrary chapters.
 *
 * The tangler is Lua, which libFuzzer cannot instrument, so this harness
 * embeds Lua 5.4 (liblua5.4-dev), loads the tangler as a module, and hands
 * each input to tests/fuzz/tangle_check.lua, which calls M.parse and M.tangle
 * and checks what they return. Any Lua error that escapes (a traceback in the
 * tangler, or a property tangle_check.lua found broken) aborts, with the
 * traceback: that input is a finding.
 *
 * For guidance, the harness gives libFuzzer coverage of the Lua code itself:
 * a line hook turns each pair (previous line, line) of Lua executed into a
 * counter in libFuzzer's extra-counters section, so an input that runs a new
 * branch of tangle.lua is kept, as one that runs new C would be.
 *
 * Run from the top of the repository (the paths below are relative). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_LUA_EDGES (1 << 16)
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t fuzz_lua_edges[FUZZ_LUA_EDGES];

static lua_State *L;
static int fuzz_check_ref;                        /* the check function, in the registry */
static int fuzz_previous_line;

static void fuzz_line_hook(lua_State *state, lua_Debug *ar) {
    (void)state;
    unsigned edge = (unsigned)fuzz_previous_line * 2654435761u ^ (unsigned)ar->currentline;
    fuzz_lua_edges[edge % FUZZ_LUA_EDGES]++;
    fuzz_previous_line = ar->currentline;
}

static int fuzz_traceback(lua_State *state) {
    luaL_traceback(state, state, lua_tostring(state, 1), 1);
    return 1;
}

static void fuzz_start_lua(void) {
    L = luaL_newstate();
    luaL_openlibs(L);
    /* dofile from a chunk: the tangler sees a caller and returns its module */
    if (luaL_dostring(L, "local M = dofile('tangle/tangle.lua')\n"
                         "return dofile('tests/fuzz/tangle_check.lua')(M)")) {
        fprintf(stderr, "fuzz_tangle: cannot load the tangler (run from the top of the repository): %s\n",
                lua_tostring(L, -1));
        exit(2);
    }
    fuzz_check_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_sethook(L, fuzz_line_hook, LUA_MASKLINE, 0);
}

static int fuzz_tangle(const uint8_t *data, size_t size) {
    if (!L) fuzz_start_lua();
    lua_pushcfunction(L, fuzz_traceback);
    lua_rawgeti(L, LUA_REGISTRYINDEX, fuzz_check_ref);
    lua_pushlstring(L, (const char *)data, size);
    fuzz_previous_line = 0;
    if (lua_pcall(L, 1, 0, -3) != LUA_OK) {
        fprintf(stderr, "fuzz_tangle: the tangler misbehaved:\n%s\n", lua_tostring(L, -1));
        abort();
    }
    lua_pop(L, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_tangle(data, size); }
