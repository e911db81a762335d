// The app's side of a view computed in the page: ui/live.py's component hands each of its elements to mount(),
// which keeps one LiveView per element (so a new setting keeps the player's iteration, its playing, and a revealed
// answer) and shows the request the server sent: a validated config, never a run.

import { LiveView } from "./live.js";

const VIEWS = new WeakMap(); // Streamlit's element -> LiveView

export function mount(component) {
  const { data, parentElement } = component;
  let view = VIEWS.get(parentElement);
  if (!view) {
    view = new LiveView(parentElement, { key: data.key });
    VIEWS.set(parentElement, view);
  }
  view.show(data.request);
  return () => {
    view.destroy();
    VIEWS.delete(parentElement);
  };
}
