// A block of text with a Copy button (ui/copy_text.py): the share links and the TRL config. Streamlit's
// st.code would do, but it loads a 1.5 MB syntax highlighter that a cold start pays for on the main thread.
// The text is set as textContent: it is never parsed as HTML.

export default function ({ data, parentElement }) {
  let box = parentElement.querySelector(".copy-box");
  if (!box) box = build(parentElement);
  box.querySelector("pre").textContent = data.text;
  box.querySelector("button").setAttribute("aria-label", data.label);
}

function build(parent) {
  const box = document.createElement("div");
  box.className = "copy-box";
  const pre = document.createElement("pre");
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Copy";
  button.addEventListener("click", async () => {
    const ok = await copy(pre);
    button.textContent = ok ? "Copied" : "Press Ctrl+C";
    setTimeout(() => (button.textContent = "Copy"), 2000);
  });
  box.append(button, pre); // the button first: it floats, and the text wraps around it
  parent.appendChild(box);
  return box;
}

async function copy(pre) {
  try {
    await navigator.clipboard.writeText(pre.textContent);
    return true;
  } catch (err) {
    // no clipboard API (plain http:// on a classroom's LAN address is not a secure context): select the
    // text, so Ctrl+C copies it, and try the older command
    const range = document.createRange();
    range.selectNodeContents(pre);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try {
      return document.execCommand("copy");
    } catch (err2) {
      return false;
    }
  }
}
