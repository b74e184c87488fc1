// panel_test.mjs: the chapters' "Run it here" panels, used in a real browser (TAP).
//
//   node tests/panel_test.mjs [SITE_DIR] [BIN]     (default build/site build/bin; run by tests/panel_test.sh)
//
// For every chapter page with a panel (details.run-panel), at 1280 x 800 and at
// 390 x 844, from file:// in headless Chromium (playwright-core, Debian's
// chromium): the panel is folded and the page has loaded none of its scripts;
// opened, it runs the program's defaults, each example its --help lists, and
// --causal when the program has it; each map it draws holds, cell for cell, the
// float32 weights the native program (BIN/NAME, same flags) writes to
// attn.npy; with --causal every key after its query is marked hidden and holds 0;
// a bad size shows the program's one-line refusal, and a run after it draws
// again. Nothing is fetched from the network, nothing but file:// is asked
// for, and no console error. The panel's scripts weigh at most 300 KB gzipped;
// on chapters 1 and 5 the first map is drawn within 1 s of the click on Run
// with the CPU throttled 4x (the time is a note for the other chapters). A
// trainer (chapter 12) is run with --steps 20, and its default run is stopped
// with Stop while the page keeps answering. Every run is made in a worker. Screenshots of each opened panel
// go to build/site-shots/NAME-panel-WIDTH.png.
//   PANEL_TEST_PAGES=01-selfatt-v1.html,05-mha.html   only these pages
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";

let count = 0, failed = 0;
function ok(cond, name, detail) {
  count++;
  console.log(`${cond ? "ok" : "not ok"} ${count} - ${name}`);
  if (!cond) { failed++; if (detail) for (const l of String(detail).split("\n").slice(0, 12)) console.log(`#   ${l}`); }
}
const note = (s) => console.log(`# ${s}`);

const site = path.resolve(process.argv[2] || "build/site");
const bin = path.resolve(process.argv[3] || "build/bin");
const shots = path.resolve(process.env.SITE_TEST_SHOTS || "build/site-shots");
const only = (process.env.PANEL_TEST_PAGES || "").split(",").filter(Boolean);
fs.mkdirSync(shots, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "abh-panel-"));

const pages = fs.readdirSync(site).filter((f) => /^\d\d-.*\.html$/.test(f)).sort()
  .filter((f) => !only.length || only.includes(f))
  .map((f) => ({ file: f, programs: (fs.readFileSync(path.join(site, f), "utf8")
                   .match(/<details class="run-panel" data-programs="([^"]*)"/) || [])[1] }))
  .filter((p) => p.programs);

// The native program's attn.npy for these flags: its float32 weights.
function nativeWeights(name, args) {
  const dir = path.join(tmp, "native");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  const r = spawnSync(path.join(bin, name), [...args, "--quiet", "--dump", "run"], { cwd: dir });
  if (r.status !== 0) return null;
  const b = fs.readFileSync(path.join(dir, "run/attn.npy"));
  const len = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8), start = b[6] === 1 ? 10 : 12;
  const shape = b.toString("latin1", start, start + len).match(/'shape':\s*\(([^)]*)\)/)[1].match(/\d+/g).map(Number);
  const data = [];
  for (let i = start + len; i < b.length; i += 4) data.push(b.readFloatLE(i));
  return { shape, data };
}

const { chromium } = await import("playwright-core");
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
                                        args: ["--no-sandbox", "--disable-gpu"] });
const widths = [{ name: "1280", width: 1280, height: 800 }, { name: "390", width: 390, height: 844 }];

for (const { file, programs } of pages) {
  // the scripts a reader's browser loads for this panel, gzipped
  const names = programs.split(" ");
  const bytes = ["panel", ...names].map((n) => path.join(site, "run", n + ".js"))
    .reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(f), { level: 9 }).length, 0);
  ok(bytes <= 300 * 1024, `${file}: the panel's scripts (panel.js, ${names.join(", ")}) weigh ${(bytes / 1024).toFixed(0)} KB gzipped, at most 300`);

  for (const w of widths) {
    const context = await browser.newContext({ viewport: { width: w.width, height: w.height } });
    const page = await context.newPage();
    const errors = [], outside = [], loaded = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (!url.startsWith("file://")) { outside.push(url); return route.abort(); }
      if (url.includes("/run/")) loaded.push(url.replace(/^.*\/run\//, "run/"));
      return route.continue();
    });
    const where = `${file} at ${w.name} px`;
    await page.goto(pathToFileURL(path.join(site, file)).href, { waitUntil: "load" });
    const panel = page.locator("details.run-panel");
    ok(!(await panel.evaluate((d) => d.open)) && loaded.length === 0, `${where}: the panel is folded and nothing of it is loaded`, loaded.join(" "));

    const cdp = await context.newCDPSession(page);
    const throttled = w.name === "1280";
    if (throttled) await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
    await panel.locator("summary").click();
    await panel.locator(".run-controls label").first().waitFor();
    const select = async (name) => {
      if (names.length > 1) { await panel.locator("select[name=program]").selectOption(name);
                              await page.waitForTimeout(50); await panel.locator(".run-controls label").first().waitFor(); }
    };
    // Runs with the controls set to args; returns what the panel shows.
    async function run(args) {
      await panel.evaluate((d, args) => {
        for (const input of d.querySelectorAll(".run-controls select, .run-controls input")) {
          const i = args.indexOf(input.name);
          if (input.type === "checkbox") input.checked = i >= 0;
          else input.value = i >= 0 ? args[i + 1] : "";
        }
        delete d.dataset.status;
        delete d.dataset.drawnMs;
      }, args);
      await panel.locator(".run-button").click();
      await page.waitForFunction((d) => d.dataset.status !== undefined, await panel.elementHandle(), { timeout: 60000 });
      return panel.evaluate((d) => ({
        status: Number(d.dataset.status), ms: Number(d.dataset.drawnMs),
        command: d.querySelector(".run-command").textContent,
        output: d.querySelector(".run-output").textContent,
        cells: [...d.querySelectorAll(".run-map")].slice(0, 64).map((m) => [...m.querySelectorAll("rect.run-cell")]
          .map((c) => ({ v: Number(c.dataset.value), hidden: c.dataset.hidden === "1", q: +c.dataset.q, k: +c.dataset.k }))),
      }));
    }

    for (const name of names) {
      await select(name);
      const help = spawnSync(path.join(bin, name), ["--help"], { encoding: "utf8" }).stdout;
      const flags = new Set(help.match(/^  --[\w-]+/gm).map((f) => f.trim()));
      const examples = (help.split("examples:\n")[1] || "").split("\n\n")[0].match(/^  [\w-]+/gm)?.map((e) => e.trim()) || [];
      const base = flags.has("--steps") ? ["--steps", "20"] : [];
      const cases = [base, ...examples.map((e) => ["--example", e])];
      if (flags.has("--causal")) cases.push([...base, "--causal"]);
      for (const args of cases) {
        const got = await run(args);
        const what = `${where}: ${name} ${args.join(" ")}`.trimEnd();
        if (args === base && throttled) {
          const fast = got.ms <= 1000;
          if (["01-selfatt-v1.html", "05-mha.html"].includes(file)) ok(fast, `${what}: first map drawn ${got.ms} ms after Run, CPU throttled 4x (at most 1000)`);
          else note(`${what}: first map drawn ${got.ms} ms after Run, CPU throttled 4x`);
        }
        const want = nativeWeights(name, args);
        ok(got.status === 0 && want && got.command === `build/bin/${[name, ...args, "--dump", "run"].join(" ")}`,
           `${what}: runs, and shows the command line`, `${got.status} ${got.command}\n${got.output}`);
        if (!want) continue;
        const nd = want.shape.length, T = want.shape[nd - 2], S = want.shape[nd - 1], H = nd === 4 ? want.shape[1] : 1;
        const bad = [];
        got.cells.forEach((cells, h) => cells.forEach((c) => {
          const x = want.data[(h * T + c.q) * S + c.k];
          if (Math.fround(x) !== c.v) bad.push(`map ${h} query ${c.q} key ${c.k}: ${c.v} drawn, ${x} native`);
        }));
        ok(got.cells.length === H && got.cells.every((m) => m.length === T * S) && bad.length === 0,
           `${what}: the ${H} map(s) drawn hold the native attn.npy's weights, cell for cell`,
           `${got.cells.length} maps of ${got.cells[0]?.length} cells; want ${H} of ${T * S}\n` + bad.slice(0, 5).join("\n"));
        if (args.includes("--causal")) {
          const wrong = got.cells.flat().filter((c) => c.k > c.q && !(c.hidden && c.v === 0));
          ok(wrong.length === 0, `${what}: every key after its query is marked hidden and holds 0`,
             wrong.slice(0, 5).map((c) => JSON.stringify(c)).join("\n"));
        }
      }
      await page.screenshot({ path: path.join(shots, `${file.replace(/\.html$/, "")}-panel-${w.name}${names.length > 1 ? "-" + name : ""}.png`), fullPage: false });
      ok(await panel.evaluate((d) => d.dataset.ranIn === "worker"), `${where}: ${name} runs in a worker, beside the page`);
      if (flags.has("--steps")) {
        // a whole training run: the page answers while it trains, and Stop ends it
        await panel.evaluate((d) => { for (const i of d.querySelectorAll(".run-controls input")) i.value = ""; delete d.dataset.status; });
        await panel.locator(".run-button").click();
        await page.waitForTimeout(500);
        const answers = await Promise.race([page.evaluate(() => 1 + 1), new Promise((r) => setTimeout(() => r(0), 2000))]);
        await panel.locator(".run-stop").click();
        const stopped = await panel.locator(".run-status").textContent();
        ok(answers === 2 && /^Stopped/.test(stopped), `${where}: ${name} trains without holding up the page, and Stop ends it`, stopped);
      }
      await panel.locator(".run-maps").scrollIntoViewIfNeeded();
      // a size that does not work: the program's own one-line refusal, then the page still runs
      const refusal = await run([...base, "--seq", "-3"]);
      const lines = refusal.output.trim().split("\n");
      ok(refusal.status !== 0 && lines.length === 1 && lines[0].startsWith(name + ":"),
         `${where}: ${name} --seq -3: the program's one-line refusal is shown`, refusal.output);
      const again = await run(base);
      ok(again.status === 0 && again.cells.length > 0, `${where}: ${name}: after a refusal, a run draws its map again`);
    }
    await page.screenshot({ path: path.join(shots, `${file.replace(/\.html$/, "")}-panel-${w.name}.png`) });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    ok(!wide, `${where}: the opened panel adds no horizontal scrollbar to the page`);
    ok(errors.length === 0, `${where}: no console error`, errors.join("\n"));
    ok(outside.length === 0, `${where}: nothing asked of the network`, outside.join("\n"));
    await context.close();
  }
}
await browser.close();
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`1..${count}`);
process.exit(failed ? 1 : 0);
