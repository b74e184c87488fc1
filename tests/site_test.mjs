// site_test.mjs: the web book, opened in a real browser (TAP, run by make test).
//
//   node tests/site_test.mjs [SITE_DIR]      (default build/site)
//
// Opens every page of the site that `make html` writes in headless Chromium
// (Debian's /usr/bin/chromium, or $CHROMIUM; driven by playwright-core, which
// downloads no browser), at 1280 x 800 and at 390 x 844 (a phone), and fails
// on: a horizontal scrollbar on the page; C code that does not fit its block
// at 1280 px (100 columns must), or a figure shrunk below its natural size or
// without a caption; an image that did not load; a link to a
// missing page or anchor; a console error; a <math> element drawn with no
// size; a page over 1 MB. It writes a screenshot of the top of every page at
// both widths to build/site-shots/ for a person to look at. Then the PDF that
// `make pdf` writes: a page per source at least, every page at most A4 or
// Letter, and every chapter's title in its text (pdfinfo, pdftotext).
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";

const site = path.resolve(process.argv[2] || "build/site");
const shots = path.resolve("build/site-shots");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const widths = [
  { name: "1280", width: 1280, height: 800 },
  { name: "390", width: 390, height: 844 },
];

let count = 0, failed = 0;
function ok(cond, name, detail) {
  count++;
  console.log(`${cond ? "ok" : "not ok"} ${count} - ${name}`);
  if (!cond) {
    failed++;
    if (detail) for (const line of String(detail).split("\n").slice(0, 12)) console.log(`#   ${line}`);
  }
}

const pages = fs.readdirSync(site).filter((f) => f.endsWith(".html")).sort();
if (pages.length === 0) {
  console.log(`1..0 # SKIP no pages in ${site}: run make html`);
  process.exit(0);
}
fs.mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu"] });
const ids = {};          // page -> Set of ids, read at the first width
const links = {};        // page -> [href] of every link
try {
  for (const w of widths) {
    const context = await browser.newContext({ viewport: { width: w.width, height: w.height } });
    for (const file of pages) {
      const where = `${file} at ${w.name} px`;
      const page = await context.newPage();
      const errors = [];
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("requestfailed", (r) => errors.push(`failed to load ${r.url()}`));
      await page.goto(pathToFileURL(path.join(site, file)).href, { waitUntil: "load" });
      const seen = await page.evaluate(() => {
        const doc = document.documentElement;
        const main = document.querySelector("main") || document.body;
        const visible = (e) => e.getClientRects().length > 0;
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
          }).map((m) => m.textContent.slice(0, 40)),
          ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
          links: [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")),
        };
      });
      ok(seen.scroll <= 0, `${where}: no horizontal scrollbar on the page`, `the page is ${seen.scroll} px wider than the window`);
      ok(seen.broken.length === 0, `${where}: every image loads`, seen.broken.join("\n"));
      if (w.name === "1280") {
        ok(seen.unfit.length === 0, `${where}: every C block shows all its columns`, seen.unfit.join("\n"));
        ok(seen.small.length === 0, `${where}: every figure at its natural size`, seen.small.join("\n"));
        ok(seen.uncaptioned.length === 0, `${where}: every figure has a caption under it`, seen.uncaptioned.join("\n"));
        ids[file] = new Set(seen.ids);
        links[file] = seen.links;
      }
      ok(seen.flat.length === 0, `${where}: every formula is drawn with a size`, seen.flat.join("\n"));
      ok(errors.length === 0, `${where}: no console error`, errors.join("\n"));
      await page.screenshot({ path: path.join(shots, `${file.replace(/\.html$/, "")}-${w.name}.png`) });
      await page.close();
    }
    await context.close();
  }
} finally {
  await browser.close();
}

// every link to a page of the site names a page and an anchor that exist
for (const file of pages) {
  const bad = [];
  for (const href of links[file]) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;          // http:, mailto: ...
    const [target, anchor] = href.split("#");
    const to = target === "" ? file : target;
    if (to.endsWith(".html")) {
      if (!ids[to]) bad.push(`${href}: no page ${to}`);
      else if (anchor && !ids[to].has(decodeURIComponent(anchor))) bad.push(`${href}: no #${anchor} in ${to}`);
    } else if (!fs.existsSync(path.join(site, to))) bad.push(`${href}: no file ${to}`);
  }
  ok(bad.length === 0, `${file}: every link reaches its page and anchor`, bad.join("\n"));
  const bytes = fs.statSync(path.join(site, file)).size;
  ok(bytes <= 1 << 20, `${file}: at most 1 MB (${bytes} bytes)`);
}
// the paper book: every source's title in its text, every page at most A4 or Letter
const pdf = path.resolve("build/book.pdf");
if (!fs.existsSync(pdf)) {
  count++;
  console.log(`ok ${count} # SKIP no build/book.pdf: run make pdf`);
} else {
  const info = execFileSync("pdfinfo", ["-l", "100000", pdf], { encoding: "utf8" });
  const pages = Number(info.match(/^Pages:\s+(\d+)/m)[1]);
  const sources = ["book.md", ...fs.readdirSync("chapters").sort().map((f) => `chapters/${f}`),
                   ...fs.readdirSync("solutions").sort().map((f) => `solutions/${f}`)].filter((f) => f.endsWith(".md"));
  ok(pages >= sources.length, `build/book.pdf has ${pages} pages, at least one per source (${sources.length})`);
  const sizes = [...info.matchAll(/^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)/gm)];
  const wide = sizes.filter((m) => Number(m[2]) > 612.5 || Number(m[3]) > 842.5).map((m) => `page ${m[1]}: ${m[2]} x ${m[3]} pt`);
  ok(sizes.length === pages && wide.length === 0, "build/book.pdf: every page at most A4 or Letter", wide.join("\n"));
  // compared without spaces and hyphens: a title may break across lines, at a hyphen
  const words = (t) => t.replace(/[`*_\s\u00ad-]/g, "");
  const text = words(execFileSync("pdftotext", ["-layout", pdf, "-"], { encoding: "utf8", maxBuffer: 1 << 28 }));
  const missing = sources.map((f) => fs.readFileSync(f, "utf8").match(/^#\s+(.+)$/m)?.[1])
    .filter((title) => title && !text.includes(words(title)));
  ok(missing.length === 0, "build/book.pdf: every chapter's, appendix's and solution file's title is in its text", missing.join("\n"));
}
console.log(`1..${count}`);
process.exit(failed ? 1 : 0);
