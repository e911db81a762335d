// The Streamlit component of a view computed in the page (ui/live.py). Its code stays small, since Streamlit sends
// it with every rerun: it loads the app's bundle (assets/js/live_app.js and the engine, the views and the player it
// imports; sim/player/bundle.py) once per page, from the app's own server, as the player loads Plotly.js, and
// hands it the element.

let loading = null;
function loadBundle(url) {
  if (window.grpoLiveApp) return Promise.resolve(window.grpoLiveApp);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => (window.grpoLiveApp ? resolve(window.grpoLiveApp) : reject(new Error(`${url} did not load`)));
      s.onerror = () => {
        loading = null;
        s.remove();
        reject(new Error(`The page's engine could not be loaded from ${url}`));
      };
      document.head.appendChild(s);
    });
  }
  return loading;
}

// Plotly.js starts loading (and running) at once, beside the bundle: the player awaits this tag (player_charts.js)
function startPlotly(url) {
  if (!url || window.Plotly || document.querySelector("script[data-grpo-plotly]")) return;
  const s = document.createElement("script");
  s.src = url;
  s.dataset.grpoPlotly = "1";
  s.addEventListener("error", () => (s.dataset.failed = "1")); // the player tries again and says why
  document.head.appendChild(s);
}

export default function (component) {
  const { data, parentElement } = component;
  startPlotly(data.request && data.request.plotly_url);
  let cleanup = null;
  let gone = false;
  loadBundle(data.bundle_url).then(
    (live) => {
      if (!gone) cleanup = live.mount(component);
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
