// site_test.mjs: the web book, opened in a real browser (TAP, run by make test).
//
//   node tests/site_test.mjs [SITE_DIR]      (default build/site)
//
// Opens every page of the site that `make html` writes in headless Chromium
// (Debian's /usr/bin/chromium, or $CHROMIUM; driven by playwright-core, which
// downloads no browser), at 1280 x 800 and at 390 x 844 (a phone), the two
// widths side by side in one browser, and fails on: a horizontal scrollbar on
// the page; an image that did not load; a link to a missing page or anchor; an
// id given twice on a page; a console error; a <math> element drawn with no
// size, or a formula's box that cuts it off or scrolls up and down; a page over
// 1 MB. At 1280 px also on: C code that does not fit its block (100 columns
// must); a figure shrunk below its natural size or without a caption; no
// chapter list in the side column. At 390 px also on: no folded Contents and On
// this page at the top of the page that unfold when tapped; inline code broken
// inside a word of up to 30 characters (`1e-5` at its hyphen). It writes a
// screenshot of the top of every page at both widths to build/site-shots/ for a
// person to look at. Then the PDF that `make pdf` writes: a page per source at
// least, every page at most A4 or Letter, and every chapter's title in its text
// (pdfinfo, pdftotext). Last, a self-check: a run of tests/site_test.sh on five
// pages with failures simulated (below) must retry, then report one `not ok`
// for the page that kept failing, and end with a plan even when node is killed.
//
// A page the browser fails to check (the browser crashed, a screenshot threw)
// is tried again once in a new browser page (and a new browser if it crashed);
// failing twice, it is one `not ok` naming the page and the reason. Whatever
// happens, the output ends with a plan.
//
// For the self-check (and for trying this by hand):
//   SITE_TEST_PAGES=a.html,b.html  only these pages (no PDF, no self-check, and
//                                  links to other pages are not followed)
//   SITE_TEST_WIDTHS=390           only these widths
//   SITE_TEST_FAULT=shot-once:a.html,shot:b.html,crash-once:c.html,hang-once:d.html,kill:e.html
//                                  a.html's first screenshot throws, every one of
//                                  b.html's does, the browser crashes while c.html
//                                  is open the first time, and stops answering on
//                                  d.html the first time; node is killed as it
//                                  reports e.html (site_test.sh adds the plan)
//   SITE_TEST_ATTEMPT_SECONDS=3    how long the browser may take over a page (120)
//   SITE_TEST_SHOTS=DIR            where the screenshots go (build/site-shots)
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import os from "node:os";
import { execFileSync, execFile } from "node:child_process";

// ---- TAP: every test one line; the plan printed once, however the run ends
let count = 0, failed = 0, planned = false;
const oneLine = (s) => String(s).split("\n")[0].replace(/\s+/g, " ").trim().slice(0, 240);
function ok(cond, name, detail) {
  count++;
  console.log(`${cond ? "ok" : "not ok"} ${count} - ${name}`);
  if (!cond) {
    failed++;
    if (detail) for (const line of String(detail).split("\n").slice(0, 12)) console.log(`#   ${line}`);
  }
}
function finish() {
  if (planned) return;
  planned = true;
  console.log(`1..${count}`);
  process.exitCode = failed ? 1 : 0;
}
// a mistake in this script, or one playwright throws where nothing waits for it:
// one `not ok`, then the plan (no stack trace, no "No plan found")
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (e) => {
    if (planned) return;
    ok(false, `tests/site_test.mjs itself: ${oneLine(e?.message ?? e)}`);
    finish();
    process.exit(1);
  });
}

const site = path.resolve(process.argv[2] || "build/site");
const shots = path.resolve(process.env.SITE_TEST_SHOTS || "build/site-shots");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const list = (s) => (s || "").split(",").map((x) => x.trim()).filter(Boolean);
const only = list(process.env.SITE_TEST_PAGES);
const widths = [
  { name: "1280", width: 1280, height: 800 },
  { name: "390", width: 390, height: 844 },
].filter((w) => !process.env.SITE_TEST_WIDTHS || list(process.env.SITE_TEST_WIDTHS).includes(w.name));
const faults = new Map(list(process.env.SITE_TEST_FAULT).map((f) => f.split(":").reverse()));   // page -> kind

let pages = fs.existsSync(site) ? fs.readdirSync(site).filter((f) => f.endsWith(".html")).sort() : [];
if (pages.length === 0) {
  console.log(`1..0 # SKIP no pages in ${site}: run make html`);
  process.exit(0);
}
const allPages = pages;
if (only.length) pages = pages.filter((f) => only.includes(f));
fs.mkdirSync(shots, { recursive: true });

// The self-check runs beside the main run (it is mostly waiting on its browser).
const selfCheck = only.length || faults.size ? null : startSelfCheck();

// ---- the browser: one for the whole run, started again if it crashes
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  ok(false, `playwright-core loads (npm ci installs it): ${oneLine(e.message)}`);
  finish();
  process.exit();
}
async function launch() {
  const opts = { executablePath, args: ["--no-sandbox", "--disable-gpu"] };
  try { return await chromium.launch(opts); } catch { return await chromium.launch(opts); }   // once more
}
let current = null;        // the promise of the browser in use
async function getBrowser() {
  for (;;) {
    const p = current ?? (current = launch());
    let b;
    try { b = await p; } catch (e) { if (current === p) current = null; throw e; }
    if (b.isConnected()) return b;
    if (current === p) current = null;                             // it crashed: a new one
  }
}

// What a page shows, read in the page: see the list at the top.
function look() {
  const doc = document.documentElement;
  const main = document.querySelector("main") || document.body;
  const visible = (e) => !!e && e.getClientRects().length > 0;
  const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
  const phone = document.querySelector(".phone-nav");
  const sideList = document.querySelector(".side .chapters");
  return {
    scroll: doc.scrollWidth - doc.clientWidth,
    broken: [...document.images].filter((i) => !i.complete || i.naturalWidth === 0).map((i) => i.src),
    unfit: [...main.querySelectorAll("pre.chunk-code, pre.c, div.sourceCode.c pre")]
      .filter((p) => visible(p) && p.scrollWidth > p.clientWidth + 1)
      .map((p) => `${p.closest("[id]")?.id || "?"}: ${p.scrollWidth} > ${p.clientWidth} px`),
    small: [...main.querySelectorAll("figure img")]
      .filter((i) => i.naturalWidth > 0 && i.getBoundingClientRect().width < i.naturalWidth - 2)
      .map((i) => `${i.getAttribute("src")}: ${Math.round(i.getBoundingClientRect().width)} of ${i.naturalWidth} px`),
    uncaptioned: [...main.querySelectorAll("img")]
      .filter((i) => !i.closest("figure")?.querySelector("figcaption")?.textContent.trim())
      .map((i) => i.getAttribute("src")),
    flat: [...main.querySelectorAll("math")].filter((m) => {
      const r = m.getBoundingClientRect();
      return visible(m) && (r.width === 0 || r.height === 0);
    }).map((m) => m.textContent.slice(0, 40))
      .concat([...main.querySelectorAll("span.math")].filter((s) => {      // its box clips it up or down
        const m = s.querySelector("math")?.getBoundingClientRect(), r = s.getBoundingClientRect();
        const scrolls = ["auto", "scroll"].includes(getComputedStyle(s).overflowY) && s.scrollHeight > s.clientHeight + 1;
        return visible(s) && m && (scrolls || m.top < r.top + s.clientTop - 0.5 || m.bottom > r.top + s.clientTop + s.clientHeight + 0.5);
      }).map((s) => `cut off or scrolled up and down: ${s.textContent.slice(0, 40)}`)),
    // inline code that goes on to a new line in the middle of a word of up to 30
    // characters (`1e-5` after its hyphen): each character's line, from its box
    split: [...main.querySelectorAll("code")].filter((c) => !c.closest("pre") && c.getClientRects().length > 1).flatMap((c) => {
      const chars = [], range = document.createRange(), walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
      for (let t = walk.nextNode(); t; t = walk.nextNode()) {
        for (let k = 0; k < t.data.length; k++) {
          range.setStart(t, k); range.setEnd(t, k + 1);
          const r = range.getBoundingClientRect();
          chars.push({ ch: t.data[k], top: r.height > 0 ? r.top : null });
        }
      }
      const text = chars.map((x) => x.ch).join(""), out = [];
      let line = null;
      chars.forEach((x, k) => {
        if (x.top === null) return;
        if (line !== null && x.top > line + 3 && k > 0 && /\S/.test(text[k - 1]) && /\S/.test(x.ch)) {
          const word = text.slice(text.lastIndexOf(" ", k) + 1).split(" ")[0];
          if (word.length <= 30) out.push(`${text.slice(0, k)}|${text.slice(k)}`);
        }
        line = x.top;
      });
      return out;
    }),
    twice: (() => { const seen = new Set(), twice = new Set(); for (const id of ids) (seen.has(id) ? twice : seen).add(id); return [...twice]; })(),
    ids,
    links: [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")),
    side: {
      shown: visible(sideList) && !!sideList.open,
      links: sideList ? [...sideList.querySelectorAll("a")].filter(visible).length : 0,
      first: sideList?.querySelector("a") && visible(sideList.querySelector("a")) ? box(sideList.querySelector("a")) : null,
      phoneShown: visible(phone),
    },
    phone: {
      shown: visible(phone),
      sideShown: visible(document.querySelector(".side")),
      folded: [...document.querySelectorAll(".phone-nav details")].every((d) => !d.open),
      summaries: [...document.querySelectorAll(".phone-nav summary")].filter(visible)
        .map((s) => ({ text: s.textContent.trim(), ...box(s) })),
      toc: !!document.querySelector(".phone-nav .on-this-page a") && !document.body.classList.contains("front"),
    },
  };
}

// At 390 px: tap Contents, then On this page; each must show its links in the window.
async function unfold(page) {
  const problems = [];
  const check = async (which, label) => {
    try {
      await page.click(`.phone-nav .${which} > summary`, { timeout: 5000 });
    } catch (e) {
      problems.push(`${label} cannot be tapped: ${oneLine(e.message)}`);
      return;
    }
    // what the reader sees once the tap is answered: the details' toggle event (which
    // brings the page's own entry into the window) runs after the click, in a task of its own
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0))));
    const shown = await page.evaluate((which) => {
      const links = [...document.querySelectorAll(`.phone-nav .${which} a`)];
      const a = document.querySelector(`.phone-nav .${which} li.current > a`) || links.find((l) => l.getClientRects().length);
      if (!a) return "no link";
      const r = a.getBoundingClientRect();
      return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= document.documentElement.clientWidth
        ? "" : `its link "${a.textContent.trim().slice(0, 30)}" is outside the window (${Math.round(r.top)}, ${Math.round(r.right)})`;
    }, which);
    if (shown) problems.push(`${label}, tapped: ${shown}`);
  };
  await check("chapters", "Contents");
  const toc = await page.evaluate(() => !!document.querySelector(".phone-nav .on-this-page a") && !document.body.classList.contains("front"));
  if (toc) await check("on-this-page", "On this page");
  const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (scroll > 0) problems.push(`unfolded, the page is ${scroll} px wider than the window`);
  return problems;
}

// One page at one width: { seen, errors, unfolded } or { failure: reason }.
// Each width keeps one browser page and takes it from page to page of the site
// (a new one costs a quarter of a second); after a failure it starts anew.
const tabs = new Map();    // width name -> { browser, context, page, errors }
async function tab(w, browser) {
  const old = tabs.get(w.name);
  if (old?.browser === browser) return old;
  tabs.delete(w.name);                                             // its browser crashed
  const context = await browser.newContext({ viewport: { width: w.width, height: w.height } });
  context.setDefaultTimeout(30000);
  const t = { browser, context, page: await context.newPage(), errors: [] };
  t.page.on("console", (m) => { if (m.type() === "error") t.errors.push(m.text()); });
  t.page.on("pageerror", (e) => t.errors.push(String(e)));
  t.page.on("requestfailed", (r) => t.errors.push(`failed to load ${r.url()}`));
  tabs.set(w.name, t);
  return t;
}
async function attempt(file, w, n, browser) {
  const { page, errors } = await tab(w, browser);
  errors.length = 0;
  await page.goto(pathToFileURL(path.join(site, file)).href, { waitUntil: "load" });
  if (faults.get(file) === "crash-once" && n === 1) {
    // killed, as the kernel would kill it (CDP's Browser.crash would leave a
    // minidump in ~/.config/chromium/Crash Reports at every run)
    const cdp = await browser.newBrowserCDPSession();
    const { processInfo } = await cdp.send("SystemInfo.getProcessInfo");
    process.kill(processInfo.find((p) => p.type === "browser").id, "SIGKILL");
    await new Promise((resolve) => { if (!browser.isConnected()) resolve(); browser.once("disconnected", resolve); });
  }
  if (faults.get(file) === "hang-once" && n === 1) await new Promise(() => {});
  const seen = await page.evaluate(look);
  if (faults.get(file) === "shot" || (faults.get(file) === "shot-once" && n === 1))
    throw new Error("page.screenshot: Protocol error (Page.captureScreenshot): Unable to capture screenshot (simulated: SITE_TEST_FAULT)");
  await page.screenshot({ path: path.join(shots, `${file.replace(/\.html$/, "")}-${w.name}.png`) });
  const unfolded = w.name === "390" ? await unfold(page) : [];
  return { seen, errors: [...errors], unfolded };
}
// a browser that stops answering is given up on after this (the self-check shortens it)
const ATTEMPT_MS = 1000 * (Number(process.env.SITE_TEST_ATTEMPT_SECONDS) || 120);
async function visit(file, w) {
  let reason = "";
  for (let n = 1; n <= 2; n++) {
    let timer, browser, onGone;
    try {
      browser = await getBrowser();
      // given up on when the browser crashes (playwright may wait for ever then)
      // or stops answering
      const gone = new Promise((_, reject) => {
        onGone = () => reject(new Error("the browser crashed"));
        if (!browser.isConnected()) onGone(); else browser.once("disconnected", onGone);
      });
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from the browser in ${ATTEMPT_MS / 1000} s`)), ATTEMPT_MS);
      });
      return await Promise.race([attempt(file, w, n, browser), gone, late]);
    } catch (e) {
      reason = oneLine(e?.message ?? e);
      const t = tabs.get(w.name);
      tabs.delete(w.name);
      // closed without waiting: a browser that crashed or hangs may never answer
      if (/no answer from the browser/.test(reason)) {
        if (current && browser && (await current.catch(() => null)) === browser) current = null;   // a new one next
        browser?.close().catch(() => {});
      } else t?.context.close().catch(() => {});
    } finally {
      clearTimeout(timer);
      if (onGone) browser.off("disconnected", onGone);
    }
  }
  return { failure: reason };
}

// The tests of one page at one width, from what visit() saw.
const ids = {};          // page -> Set of its ids
const links = {};        // page -> [href] of every link
function report(file, w, r) {
  if (faults.get(file) === "kill") process.kill(process.pid, "SIGKILL");   // the self-check: node dies
  const where = `${file} at ${w.name} px`;
  if (r.failure) return ok(false, `${where}: checked in the browser (tried twice): ${r.failure}`);
  const { seen, errors } = r;
  ok(seen.scroll <= 0, `${where}: no horizontal scrollbar on the page`, `the page is ${seen.scroll} px wider than the window`);
  ok(seen.broken.length === 0, `${where}: every image loads`, seen.broken.join("\n"));
  if (w.name === "1280") {
    ok(seen.unfit.length === 0, `${where}: every C block shows all its columns`, seen.unfit.join("\n"));
    ok(seen.small.length === 0, `${where}: every figure at its natural size`, seen.small.join("\n"));
    ok(seen.uncaptioned.length === 0, `${where}: every figure has a caption under it`, seen.uncaptioned.join("\n"));
    const s = seen.side;
    ok(s.shown && s.links > 0 && s.first && s.first.left < 300 && s.first.top < w.height && !s.phoneShown,
      `${where}: the chapter list shown in the side column`,
      `side column shown: ${s.shown}, links shown: ${s.links}, first link at ${JSON.stringify(s.first)}, phone navigation shown: ${s.phoneShown}`);
  }
  if (!ids[file]) {
    ids[file] = new Set(seen.ids);
    links[file] = seen.links;
    ok(seen.twice.length === 0, `${file}: every id is given once`, seen.twice.map((id) => `id="${id}" is on more than one element`).join("\n"));
  }
  if (w.name === "390") {
    const p = seen.phone, problems = [...r.unfolded];
    const want = p.toc ? ["Contents", "On this page"] : ["Contents"];
    for (const text of want) {
      const s = p.summaries.find((x) => x.text === text);
      if (!s) problems.push(`no ${text} shown`);
      else if (s.bottom > 150 || s.right > w.width) problems.push(`${text} is not at the top (${Math.round(s.left)}, ${Math.round(s.top)} to ${Math.round(s.right)}, ${Math.round(s.bottom)})`);
    }
    if (!p.shown) problems.push("no phone navigation shown");
    if (!p.folded) problems.push("the navigation is not folded when the page opens");
    if (p.sideShown) problems.push("the side column is shown too");
    ok(problems.length === 0, `${where}: ${want.join(" and ")} at the top, folded, unfold when tapped`, problems.join("\n"));
    ok(seen.split.length === 0, `${where}: inline code goes on to a new line only at a space (or in a word over 30 characters)`,
      seen.split.map((x) => `broken at |: ${x}`).join("\n"));
  }
  ok(seen.flat.length === 0, `${where}: every formula is drawn with a size, whole up and down`, seen.flat.join("\n"));
  ok(errors.length === 0, `${where}: no console error`, errors.join("\n"));
}

// Both widths at once, each its own sequence of pages; reported in a fixed order.
let started = false;
try {
  await getBrowser();
  started = true;
} catch (e) {
  ok(false, `Chromium starts (${executablePath}, tried twice): ${oneLine(e.message)}`);
}
if (started) {
  const results = new Map();           // "width page" -> promise of visit()
  for (const w of widths) {
    let chain = Promise.resolve();
    for (const file of pages) {
      const r = chain.then(() => visit(file, w));
      results.set(`${w.name} ${file}`, r);
      chain = r;
    }
  }
  for (const file of pages) for (const w of widths) report(file, w, await results.get(`${w.name} ${file}`));
  try { await (await current)?.close(); } catch { /* it is gone already */ }

  // every link to a page of the site names a page and an anchor that exist
  for (const file of pages) {
    const bytes = fs.statSync(path.join(site, file)).size;
    ok(bytes <= 1 << 20, `${file}: at most 1 MB (${bytes} bytes)`);
    if (!links[file]) continue;                                    // the browser failed on it
    const bad = [];
    for (const href of links[file]) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;             // http:, mailto: ...
      const [target, anchor] = href.split("#");
      const to = target === "" ? file : target;
      if (to.endsWith(".html")) {
        if (!allPages.includes(to)) bad.push(`${href}: no page ${to}`);
        else if (!ids[to]) continue;                               // not opened in this run
        else if (anchor && !ids[to].has(decodeURIComponent(anchor))) bad.push(`${href}: no #${anchor} in ${to}`);
      } else if (!fs.existsSync(path.join(site, to))) bad.push(`${href}: no file ${to}`);
    }
    ok(bad.length === 0, `${file}: every link reaches its page and anchor`, bad.join("\n"));
  }
}

// the paper book: every source's title in its text, every page at most A4 or Letter
const pdf = path.resolve("build/book.pdf");
if (only.length) {
  // a run on some pages only
} else if (!fs.existsSync(pdf)) {
  count++;
  console.log(`ok ${count} # SKIP no build/book.pdf: run make pdf`);
} else {
  try {
    const info = execFileSync("pdfinfo", ["-l", "100000", pdf], { encoding: "utf8" });
    const sheets = Number(info.match(/^Pages:\s+(\d+)/m)[1]);
    const sources = ["book.md", ...fs.readdirSync("chapters").sort().map((f) => `chapters/${f}`),
                     ...fs.readdirSync("solutions").sort().map((f) => `solutions/${f}`)].filter((f) => f.endsWith(".md"));
    ok(sheets >= sources.length, `build/book.pdf has ${sheets} pages, at least one per source (${sources.length})`);
    const sizes = [...info.matchAll(/^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)/gm)];
    const wide = sizes.filter((m) => Number(m[2]) > 612.5 || Number(m[3]) > 842.5).map((m) => `page ${m[1]}: ${m[2]} x ${m[3]} pt`);
    ok(sizes.length === sheets && wide.length === 0, "build/book.pdf: every page at most A4 or Letter", wide.join("\n"));
    // compared without spaces and hyphens: a title may break across lines, at a hyphen
    const words = (t) => t.replace(/[`*_\s\u00ad-]/g, "");
    const text = words(execFileSync("pdftotext", ["-layout", pdf, "-"], { encoding: "utf8", maxBuffer: 1 << 28 }));
    const missing = sources.map((f) => fs.readFileSync(f, "utf8").match(/^#\s+(.+)$/m)?.[1])
      .filter((title) => title && !text.includes(words(title)));
    ok(missing.length === 0, "build/book.pdf: every chapter's, appendix's and solution file's title is in its text", missing.join("\n"));
  } catch (e) {
    ok(false, `build/book.pdf read by pdfinfo and pdftotext: ${oneLine(e.message)}`);
  }
}

// The self-check: tests/site_test.sh on the five smallest pages at 390 px, with
// the first page's first screenshot failing, every screenshot of the second,
// the browser crashing on the third, hanging on the fourth (for 10 s), and node
// killed on the fifth. Expected: the crash and the hang survived; one `not ok`
// naming the second page and the screenshot, and one saying the run stopped
// before its plan; then a plan that counts the tests; no stack trace; exit 1.
function startSelfCheck() {
  const size = (f) => fs.statSync(path.join(site, f)).size;
  const chosen = [...pages].sort((x, y) => size(x) - size(y)).slice(0, 5).sort();   // in the order they are checked
  if (chosen.length < 5) return null;
  const [a, b, c, d, e] = chosen;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "site-test-"));          // its screenshots
  return new Promise((resolve) => {
    execFile("sh", [path.resolve("tests/site_test.sh"), site], {
      env: { ...process.env, SITE_TEST_PAGES: chosen.join(","), SITE_TEST_WIDTHS: "390", SITE_TEST_ATTEMPT_SECONDS: "10", SITE_TEST_SHOTS: dir,
             SITE_TEST_FAULT: `shot-once:${a},shot:${b},crash-once:${c},hang-once:${d},kill:${e}` },
      encoding: "utf8", timeout: 180000,
    }, (err, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      const lines = stdout.trim().split("\n");
      const tests = lines.filter((l) => /^(not )?ok \d+/.test(l));
      const notOk = tests.filter((l) => l.startsWith("not ok"));
      const problems = [];
      if (/^1\.\.0 # SKIP/.test(lines[0])) return resolve({ skip: lines[0].replace(/^1\.\.0 # SKIP /, ""), chosen });
      if (lines.at(-1) !== `1..${tests.length}`) problems.push(`its last line is "${lines.at(-1)}", not the plan 1..${tests.length}`);
      if (!tests.every((l, k) => l.match(/^(?:not )?ok (\d+)/)[1] === String(k + 1))) problems.push("its tests are not numbered 1, 2, 3 ...");
      if (notOk.length !== 2) problems.push(`${notOk.length} not ok lines, not 2: ${notOk.join(" | ")}`);
      if (!notOk.some((l) => l.includes(b) && /screenshot/i.test(l))) problems.push(`no not ok names ${b} and the screenshot`);
      if (!/stopped before its plan/.test(notOk.at(-1) ?? "")) problems.push("its last not ok does not say that it stopped before its plan");
      if (notOk.some((l) => [a, c, d].some((f) => l.includes(f)))) problems.push(`${a}, ${c} or ${d} failed, though tried again`);
      if (!tests.some((l) => l.startsWith("ok") && l.includes(c))) problems.push(`nothing of ${c} passed after the browser crashed`);
      if (!tests.some((l) => l.startsWith("ok") && l.includes(d))) problems.push(`nothing of ${d} passed after the browser hung`);
      if (/^\s+at /m.test(stdout + stderr)) problems.push("it printed a stack trace");
      if (err?.code !== 1) problems.push(`it exited with ${err?.code ?? 0} (signal ${err?.signal ?? "none"}), not 1`);
      resolve({ problems, chosen });
    });
  });
}
if (selfCheck) {
  const r = await selfCheck;
  const name = `a failing screenshot, a crashed or hung browser is tried again, then one not ok, and the plan comes whatever happens (${r?.chosen.join(", ")} with failures simulated)`;
  if (r?.skip) { count++; console.log(`ok ${count} # SKIP the self-check: ${r.skip}`); }
  else if (r) ok(r.problems.length === 0, name, r.problems.join("\n"));
}
finish();
process.exit();           // not kept waiting by a browser given up on
