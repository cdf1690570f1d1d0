// Renders a pivot-lsp report in Debian's Chromium through playwright-core, as a reader
// would open it: no network (every request other than the page's own file is recorded), each
// figure's chart read from the DOM (legend texts, lines and bands by colour, the count labels),
// its table read as a screen reader gets it (header and row cells), every export button
// clicked and its download kept, a screenshot of each figure and of the whole page.
//
// usage: node render_report.js PLAYWRIGHT_CORE_DIR CHROMIUM PAGE.html OUT_DIR
// prints one JSON object on stdout.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [pwDir, chromiumPath, pagePath, outDir] = process.argv.slice(2);
const { chromium } = require(pwDir);

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const context = await browser.newContext({
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('data:') && u !== 'file://' + pagePath) requests.push(u);
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + pagePath);
  await page.screenshot({ path: path.join(outDir, 'page.png'), fullPage: true });

  const figures = await page.$$eval('figure', (figs) =>
    figs.map((f) => {
      const svg = f.querySelector('svg');
      const colour = (el) => (el.getAttribute('stroke') || el.getAttribute('fill') || '').toUpperCase();
      return {
        name: f.dataset.name,
        csv: f.dataset.csv,
        svg: svg
          ? {
              title: svg.querySelector('title') ? svg.querySelector('title').textContent : null,
              width: +svg.getAttribute('width'),
              height: +svg.getAttribute('height'),
              texts: Array.from(svg.querySelectorAll('text')).map((t) => t.textContent.trim()),
              lines: Array.from(svg.querySelectorAll('polyline')).map(colour),
              bands: Array.from(svg.querySelectorAll('polygon')).map((p) => ({
                fill: colour(p),
                opacity: p.getAttribute('opacity') || p.getAttribute('fill-opacity'),
              })),
              shown: svg.getBoundingClientRect().width > 0,
            }
          : null,
        caption: f.querySelector('figcaption').textContent,
        header: Array.from(f.querySelectorAll('thead th')).map((c) => c.textContent),
        rows: Array.from(f.querySelectorAll('tbody tr')).map((tr) =>
          Array.from(tr.children).map((c) => c.textContent)
        ),
        buttons: Array.from(f.querySelectorAll('button[data-export]')).map((b) => b.dataset.export),
      };
    })
  );

  const downloads = {};
  for (const fig of figures) {
    const loc = page.locator(`figure[data-name="${fig.name}"]`);
    await loc.screenshot({ path: path.join(outDir, `${fig.name}.figure.png`) });
    downloads[fig.name] = {};
    for (const kind of fig.buttons) {
      // A PNG is drawn through a canvas first: on a loaded machine its download can take a
      // while, and a click that lands while the page is busy may start none. Up to three
      // clicks, a minute each; a button that never downloads still fails the test.
      let dl;
      for (let attempt = 1; !dl; attempt++) {
        try {
          [dl] = await Promise.all([
            page.waitForEvent('download', { timeout: 60000 }),
            loc.locator(`button[data-export="${kind}"]`).click(),
          ]);
        } catch (e) {
          if (attempt >= 3) throw new Error(`${fig.name}: the ${kind} button started no download in ${attempt} clicks: ${e.message}`);
        }
      }
      const file = path.join(outDir, dl.suggestedFilename());
      await dl.saveAs(file);
      downloads[fig.name][kind] = file;
    }
  }
  await browser.close();
  process.stdout.write(JSON.stringify({ requests, errors, figures, downloads }));
})().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
