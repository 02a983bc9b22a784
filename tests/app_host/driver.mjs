// Shows an MCP App view in headless Chromium as a web host does; run by tests/support/app_host.py, which copies
// it and host.mjs beside their node_modules in .cache/app-host/.   node driver.mjs JOB.json
// The host page and the view each have their own HTTP server on 127.0.0.1 (two ports: two origins); the
// view's document carries the spec's default CSP as a header. Prints one JSON line: what the view showed,
// or {"error": "<which step never happened>"}.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";

const HERE = dirname(fileURLToPath(import.meta.url));
// The spec's default (apps.mdx, "Host Behavior"), with its sandbox's frame-src, object-src and base-uri.
const DEFAULT_CSP = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "media-src 'self' data:",
  "connect-src 'none'",
  "frame-src 'none'",
  "object-src 'none'",
  "base-uri 'self'",
].join("; ");
const WIDTH = 720;
// Some of the spec's standard style variables, as hosts pass them in hostContext.styles (page: the host's
// own background around the view).
const HOST_STYLES = {
  light: {
    page: "#faf9f5",
    "--color-background-primary": "#ffffff",
    "--color-background-secondary": "#f5f4ef",
    "--color-text-primary": "#141413",
    "--color-text-secondary": "#5e5d59",
    "--color-text-danger": "#b3261e",
    "--color-text-success": "#1e6b3a",
    "--color-text-warning": "#8a5a00",
    "--color-border-primary": "#d1cfc5",
    "--font-sans": "system-ui, sans-serif",
    "--font-mono": "ui-monospace, monospace",
    "--border-radius-md": "8px",
  },
  dark: {
    page: "#262624",
    "--color-background-primary": "#30302e",
    "--color-background-secondary": "#1f1e1d",
    "--color-text-primary": "#faf9f5",
    "--color-text-secondary": "#c2c0b6",
    "--color-text-danger": "#f2b8b5",
    "--color-text-success": "#8fd19e",
    "--color-text-warning": "#f0c36d",
    "--color-border-primary": "#4a4945",
    "--font-sans": "system-ui, sans-serif",
    "--font-mono": "ui-monospace, monospace",
    "--border-radius-md": "8px",
  },
};
const QUIET_MS = 300; // after handling a result, the view counts as rendered when still for this long
// A script in an isolated world of the view's frame (CSP does not apply to it; the view cannot see it):
// counts the tool results the view has handled. It listens first, so its timeout runs after the view's
// own listeners.
const PROBE_WORLD = "app-host-probe";
const PROBE = `let depth = 0;
for (let w = window; w !== top; w = w.parent) depth += 1;
if (self.origin === VIEW_ORIGIN && depth === VIEW_DEPTH) { // self: location says null for srcdoc
  globalThis.appHostResults = 0;
  addEventListener("message", (event) => {
    if (event.source !== parent || event.data?.method !== "ui/notifications/tool-result") return;
    const drawn = () => { globalThis.appHostResults += 1; };
    setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(drawn)));
  });
}`;
const POLL_MS = 50;

class Never extends Error {}

function serve(routes) {
  // routes: {path: [contentType, body, extraHeaders]}; 404 for anything else.
  const server = createServer((req, res) => {
    const route = routes[new URL(req.url, "http://x").pathname];
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const [type, body, headers] = route;
    res.writeHead(200, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

// The view's document is at the view's origin, or (behind the sandbox proxy) about:srcdoc there.
const fromView = (url, viewOrigin) =>
  typeof url === "string" && (url.startsWith(viewOrigin + "/") || url === "about:srcdoc");
// The spec's sandbox proxy (apps.mdx, "Sandbox proxy"), as the reference host's: a page on the sandbox's
// origin that loads the view the host sends it into an inner frame and relays messages both ways. The view
// (srcdoc) inherits the proxy's origin and CSP.
const SANDBOX_PROXY = `<!doctype html><meta charset="utf-8">
<style>
  html, body { margin: 0; height: 100%; }
  iframe { border: 0; width: 100%; height: 100%; display: block; }
</style>
<body><script>
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
document.body.append(inner);
const host = new URL(document.referrer).origin;
addEventListener("message", (event) => {
  if (event.source === parent && event.origin === host) {
    if (event.data?.method === "ui/notifications/sandbox-resource-ready") {
      const { html, sandbox } = event.data.params;
      if (typeof sandbox === "string") inner.setAttribute("sandbox", sandbox);
      inner.srcdoc = html;
    } else {
      inner.contentWindow.postMessage(event.data, "*");
    }
  } else if (event.source === inner.contentWindow) {
    parent.postMessage(event.data, host);
  }
});
parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
</script>`;
const origin = (server) => `http://127.0.0.1:${server.address().port}`;

async function hostBundle() {
  const built = await esbuild.build({
    entryPoints: [join(HERE, "host.mjs")],
    bundle: true,
    format: "iife",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0].text;
}

async function until(what, deadline, check) {
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Never(what);
}

function refusal(csp) {
  const what = csp.contentSecurityPolicyViolationType.replace(/^k|Violation$/g, "").toLowerCase();
  const line = csp.sourceCodeLocation.lineNumber + 1;
  return `Content Security Policy refused ${what} (${csp.violatedDirective}) at line ${line} of the view`;
}

function frameDepth(frame) {
  let depth = 0;
  for (let f = frame; f && f.parentFrame(); f = f.parentFrame()) depth += 1;
  return depth;
}

function watchRequests(page, viewUrl, viewDepth, seen) {
  // Requests that reach the network; watchView adds (from Chromium's issues) those the CSP refused before
  // that: puppeteer sees a refused image but not a refused fetch.
  let documentSeen = false;
  page.on("request", (request) => {
    const frame = request.frame();
    const inView = frame && frameDepth(frame) === viewDepth;
    if (!inView || request.url().startsWith("data:")) return; // data: URLs never reach the network
    if (!documentSeen && request.isNavigationRequest() && request.url() === viewUrl) {
      documentSeen = true; // the view's own document, which the host loads
      return;
    }
    seen.requests.push(request);
  });
}

function watchConsole(page, viewOrigin, seen) {
  // Console errors (CSP refusals and failed loads among them) belong to the view when they point at its
  // origin; watchView takes exceptions by the context they were thrown in (a thrown string has no stack).
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const where = [message.location(), ...message.stackTrace()].map((l) => l?.url);
    const to = where.some((url) => fromView(url, viewOrigin)) ? seen.consoleErrors : seen.hostErrors;
    to.push(message.text());
  });
}

async function watchView(page, viewOrigin, viewUrl, viewDepth, seen) {
  // Returns a probe: it evaluates in an isolated world of the view's frame (the view's DOM, none of its
  // script's globals).
  watchRequests(page, viewUrl, viewDepth, seen);
  watchConsole(page, viewOrigin, seen);
  const viewContexts = new Set();
  let probeContext = null;
  const session = await page.createCDPSession();
  session.on("Runtime.executionContextCreated", ({ context }) => {
    if (context.origin !== viewOrigin) return;
    if (context.name === PROBE_WORLD) probeContext = context.id;
    else viewContexts.add(context.id);
  });
  session.on("Runtime.exceptionThrown", ({ exceptionDetails: e }) => {
    const thrown = e.exception?.description?.split("\n")[0] ?? String(e.exception?.value ?? "");
    const inView = viewContexts.has(e.executionContextId) || fromView(e.url, viewOrigin);
    (inView ? seen.consoleErrors : seen.hostErrors).push(`${e.text} ${thrown}`.trim());
  });
  session.on("Audits.issueAdded", ({ issue }) => {
    const csp = issue.details?.contentSecurityPolicyIssueDetails;
    if (!csp || !fromView(csp.sourceCodeLocation?.url, viewOrigin)) return;
    if (csp.blockedURL) seen.refused.push(csp.blockedURL);
    else seen.consoleErrors.push(refusal(csp)); // Chromium does not always log these (eval, inline code)
  });
  await Promise.all(["Runtime", "Audits", "Page"].map((domain) => session.send(`${domain}.enable`)));
  const source = PROBE.replace("VIEW_ORIGIN", JSON.stringify(viewOrigin)).replace("VIEW_DEPTH", viewDepth);
  await session.send("Page.addScriptToEvaluateOnNewDocument", { source, worldName: PROBE_WORLD });
  return async (expression) => {
    if (probeContext === null) return null;
    const ask = { expression, contextId: probeContext, returnByValue: true };
    return (await session.send("Runtime.evaluate", ask)).result.value ?? null;
  };
}

function attempts(seen) {
  // A refused image is both a puppeteer request and an issue; a refused fetch only an issue: count each once.
  const reached = seen.requests.map((request) => request.url());
  for (const url of seen.refused) {
    const i = reached.indexOf(url);
    if (i >= 0) reached.splice(i, 1);
  }
  return [...reached, ...seen.refused];
}

async function settledText(page, probe, count, deadline) {
  // Rendered: the view has handled `count` tool results (its listeners ran and two frames were drawn), and
  // neither its text nor its frame's height (size-changed) moved for QUIET_MS since.
  const handled = () => probe("globalThis.appHostResults");
  await until(`the view never handled tool result ${count}`, deadline, async () => {
    return (await handled()) >= count;
  });
  let last = null;
  let since = Date.now();
  const found = await until(`the view's text never settled after result ${count}`, deadline, async () => {
    const text = await probe("document.body ? document.body.innerText : ''").catch(() => null);
    const now = JSON.stringify([text, await page.$eval("iframe", (f) => f.style.height)]);
    if (now !== last) {
      [last, since] = [now, Date.now()];
      return null;
    }
    return text !== null && Date.now() - since >= QUIET_MS ? { text } : null;
  });
  return found.text;
}

async function startServers(job) {
  // Two ports, two origins: the host page's and the view's (the view's document under the CSP).
  const view = await serve({
    "/view.html": ["text/html; charset=utf-8", job.html, { "content-security-policy": DEFAULT_CSP }],
    "/sandbox.html": ["text/html; charset=utf-8", SANDBOX_PROXY, { "content-security-policy": DEFAULT_CSP }],
  });
  const { page: background } = HOST_STYLES[job.theme];
  const hostPage = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">
    <body style="margin:0;padding:20px;background:${background};color-scheme:${job.theme}">`;
  const host = await serve({
    "/": ["text/html; charset=utf-8", hostPage, {}],
    "/host.js": ["text/javascript", await hostBundle(), {}],
  });
  return { view, host };
}

async function openView(browser, job, servers, seen) {
  // The page, and a probe of the view's frame (watchView).
  const page = await browser.newPage();
  await page.setViewport({ width: WIDTH + 40, height: 800 });
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: job.theme }]);
  const viewUrl = `${origin(servers.view)}/${job.sandboxProxy ? "sandbox" : "view"}.html`;
  const probe = await watchView(page, origin(servers.view), viewUrl, job.sandboxProxy ? 2 : 1, seen);
  await page.goto(`${origin(servers.host)}/`);
  await page.addScriptTag({ url: `${origin(servers.host)}/host.js` });
  const { page: _, ...variables } = HOST_STYLES[job.theme];
  const styles = job.hostStyles ? variables : null;
  const args = { viewUrl, theme: job.theme, width: WIDTH, styles, html: job.sandboxProxy ? job.html : null };
  await page.evaluate((a) => window.appHost.show(a), args);
  return { page, probe };
}

async function handshake(page, job, deadline) {
  const sent = (method) => () => page.evaluate((m) => window.appHost.state.sent.includes(m), method);
  await until("the view never sent ui/initialize", deadline, sent("ui/initialize"));
  await until(
    "the view never sent ui/notifications/initialized (or the host refused its ui/initialize)",
    deadline,
    () => page.evaluate(() => window.appHost.state.initialized),
  );
  await page.evaluate((args) => window.appHost.toolInput(args), job.toolInput);
}

async function deliver(page, probe, job, deadline) {
  const out = { texts: [], screenshots: [] };
  for (const [i, result] of job.results.entries()) {
    if (!(await page.evaluate((r) => window.appHost.isToolResult(r), result))) {
      throw new Never(`result ${i + 1} is not a CallToolResult (the host's MCP client refuses it)`);
    }
    await page.evaluate((r) => window.appHost.toolResult(r), result);
    out.texts.push(await settledText(page, probe, i + 1, deadline));
    if (job.screenshotDir) {
      const path = join(job.screenshotDir, `view-${i + 1}.png`);
      await (await page.$("iframe")).screenshot({ path });
      out.screenshots.push(path);
    }
  }
  return out;
}

async function run(job, browser, seen) {
  const deadline = Date.now() + job.timeout * 1000;
  const servers = await startServers(job);
  try {
    const { page, probe } = await openView(browser, job, servers, seen);
    await handshake(page, job, deadline);
    const out = await deliver(page, probe, job, deadline);
    const answeredTeardown = await page.evaluate(() => window.appHost.teardown());
    const state = await page.evaluate(() => window.appHost.state);
    seen.hostErrors.push(...state.hostErrors);
    return { ...out, handshake: state.sent, answered_teardown: answeredTeardown };
  } finally {
    servers.view.close();
    servers.host.close();
  }
}

async function main() {
  const job = JSON.parse(readFileSync(process.argv[2], "utf-8"));
  const seen = { requests: [], refused: [], consoleErrors: [], hostErrors: [] };
  let browser = null;
  let answer;
  try {
    browser = await puppeteer.launch({
      executablePath: job.chromium,
      headless: true,
      userDataDir: job.profile,
      args: [
        // The OS sandbox is refused to root and, on Ubuntu 24.04 runners, by AppArmor; CSP and the iframe's
        // sandbox attribute, what a host's framing means to a view, are Blink's and hold without it.
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
      ],
      timeout: job.launchTimeout * 1000,
      protocolTimeout: (job.timeout + job.launchTimeout) * 1000,
    });
    writeFileSync(job.pidFile, String(browser.process()?.pid ?? ""));
    const shown = await run(job, browser, seen);
    answer = {
      ...shown,
      requests: attempts(seen),
      console_errors: seen.consoleErrors,
      host_errors: seen.hostErrors,
    };
  } catch (error) {
    const message = error instanceof Never ? error.message : `the host failed: ${error?.message ?? error}`;
    answer = { error: message.split("\n")[0], host_errors: seen.hostErrors };
  } finally {
    if (browser) await browser.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
  process.exit(answer.error ? 1 : 0);
}

main();
