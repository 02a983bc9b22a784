// The host page: frames an MCP App view as a web host does and talks to it through the real host SDK
// (@modelcontextprotocol/ext-apps's AppBridge over its PostMessageTransport). Bundled by driver.mjs with
// esbuild; the driver calls window.appHost from puppeteer.
import { isCallToolResult } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

// The permissions the spec gives the sandbox that holds a view (apps.mdx, "Sandbox proxy").
const SANDBOX = "allow-scripts allow-same-origin";
// The reference host's inner frame, behind a sandbox proxy; the proxy's own messages are not the view's.
const INNER_SANDBOX = "allow-scripts allow-same-origin allow-forms";
const PROXY = "ui/notifications/sandbox-";

const state = {
  sent: [], // JSON-RPC methods the view sent, in order, as they arrived on the wire
  initialized: false,
  sizeChanges: 0,
  hostErrors: [],
};
let bridge = null;

async function show({ viewUrl, theme, width, styles, html }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", SANDBOX);
  frame.setAttribute("title", "MCP App view");
  frame.style.cssText = `width:${width}px;height:160px;border:0;display:block`;
  document.body.append(frame);
  // The view's window proxy stays the same object across the frame's navigation, so the bridge listens
  // before the view's document exists and cannot miss its ui/initialize.
  window.addEventListener("message", (event) => {
    const method = event.data?.method;
    if (event.source === frame.contentWindow && typeof method === "string" && !method.startsWith(PROXY)) {
      state.sent.push(method);
    }
  });
  const hostContext = {
    theme,
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    containerDimensions: { width, maxHeight: 4000 },
    platform: "web",
    locale: "en-US",
    timeZone: "UTC",
    ...(styles ? { styles: { variables: styles } } : {}),
  };
  bridge = new AppBridge(
    null,
    { name: "robot-md-mcp-test-host", version: "1.0.0" },
    { openLinks: {}, logging: {} },
    { hostContext },
  );
  bridge.oninitialized = () => {
    state.initialized = true;
  };
  bridge.onsizechange = ({ height }) => {
    state.sizeChanges += 1;
    if (typeof height === "number" && height > 0) frame.style.height = `${Math.ceil(height)}px`;
  };
  bridge.onerror = (error) => state.hostErrors.push(String(error?.message ?? error));
  if (html !== null) {
    const load = () => bridge.sendSandboxResourceReady({ html, sandbox: INNER_SANDBOX });
    bridge.addEventListener("sandboxready", load); // the proxy is ready: the host sends it the view
  }
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = viewUrl;
}

window.appHost = {
  state,
  show,
  toolInput: (args) => bridge.sendToolInput({ arguments: args }),
  // A host's MCP client checks a tools/call result before anything sees it: one that fails is not delivered.
  isToolResult: (result) => isCallToolResult(result),
  toolResult: (result) => bridge.sendToolResult(result),
  // A host tears the view down before removing it; a view that does not answer is given a second.
  teardown: () =>
    Promise.race([
      bridge.teardownResource({}).then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), 1000)),
    ]),
};
