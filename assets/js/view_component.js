// The app's one component (ui/view.py), as Streamlit sends it with every script run: kept small, it loads the
// app's bundle (assets/js/app_view.js and what it imports: the views, the engine, the renderer, the player;
// sim/player/bundle.py) once per page from the app's own server, starts Plotly.js and KaTeX beside it, and hands
// the element to the bundle's mount().

function once(tag, attrs) {
  const key = attrs.src || attrs.href;
  if (!key || document.querySelector(`${tag}[data-grpo="${CSS.escape(key)}"]`)) return null;
  const node = document.createElement(tag);
  Object.assign(node, attrs);
  node.dataset.grpo = key;
  if (tag === "script") node.addEventListener("error", () => (node.dataset.failed = "1")); // the player says why
  document.head.appendChild(node);
  return node;
}

let loading = null;
function loadBundle(url) {
  if (window.grpoApp) return Promise.resolve(window.grpoApp);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => (window.grpoApp ? resolve(window.grpoApp) : reject(new Error(`${url} did not load`)));
      s.onerror = () => {
        loading = null;
        s.remove();
        reject(new Error(`The page's code could not be loaded from ${url}`));
      };
      document.head.appendChild(s);
    });
  }
  return loading;
}

export default function (component) {
  const { data, parentElement } = component;
  if (data.plotly_url && !window.Plotly && !document.querySelector("script[data-grpo-plotly]")) {
    const s = once("script", { src: data.plotly_url, async: true }); // player_charts.js's loadPlotly awaits this tag
    if (s) s.dataset.grpoPlotly = "1";
  }
  if (data.katex_css) once("link", { rel: "stylesheet", href: data.katex_css });
  // KaTeX first: a formula drawn before it loads shows its plain text until the next draw
  const katex = data.katex_url && !window.katex ? new Promise((done) => {
    const s = once("script", { src: data.katex_url });
    if (!s) return done();
    s.addEventListener("load", done);
    s.addEventListener("error", done);
  }) : Promise.resolve(); // prettier-ignore
  let cleanup = null;
  let gone = false;
  Promise.all([loadBundle(data.bundle_url), katex]).then(
    ([app]) => {
      if (!gone) cleanup = app.mount(component);
    },
    (err) => {
      const p = document.createElement("p");
      p.className = "gp-error";
      p.textContent = `${err.message}. Reload the page; if it persists, the server cannot serve its files.`;
      parentElement.replaceChildren(p);
    }
  );
  return () => {
    gone = true;
    if (cleanup) cleanup();
  };
}
