// Predict, then reveal, in the page, in both hosts (assets/js/doc.js's questions, a live view's question): "Predict
// first.", "Your guess", "Reveal", then "Your guess 100, the chapter's answer 96: off by 4 (4% of the answer), within
// ±19: close." (a percentage is off by points: "off by 16.3 points") or "Right: ..." / "Not quite: you picked ..."; outside
// predict mode the question and the one line "Chapter's answer: 96.0%. explain". A number the chapter does not
// print is "this run's answer" (`whose`). Every text goes in with textContent. The pure parts (formatting,
// closeness, the accepted range) have no DOM: tests/test_predict.py runs them under node.
//
//   const box = new PredictBox(parent, () => showCharts());   // then() runs once the answer is revealed
//   box.ask(question);   // {question, answer, kind "number" | "choice", options, tolerance, unit, fmt, lo, hi, explain,
//                        //  whose: "the chapter's answer" (default) | "this run's answer"}

import { format } from "./numfmt.js";

const COMPACT = 1e6; // from this size on a number is shown as 1.23e+8 whatever the page's format

// x in the question's format (a numfmt.js spec: ".1f", ".4g"), compact when huge, never "-0" (numfmt.js writes none)
export function fmtNumber(x, fmt, unit = null) {
  const text = Math.abs(x) < COMPACT ? format(x, fmt) : format(x, ".3g");
  return text + (unit || "");
}

// the guesses a question accepts: a percentage 0..100, else within 1000 times the answer either way
export function answerRange(answer, unit, lo, hi) {
  const span = 1000 * Math.max(1.0, Math.abs(answer));
  const low = lo === null || lo === undefined ? (unit === "%" ? 0.0 : -span) : lo;
  const high = hi === null || hi === undefined ? (unit === "%" ? 100.0 : span) : hi;
  return [low, high];
}

export function closeness(guess, answer, tolerance) {
  const abs_err = Math.abs(guess - answer);
  return { abs_err, rel_err: answer !== 0 ? abs_err / Math.abs(answer) : null, close: abs_err <= tolerance };
}

function relText(rel) {
  if (rel === null) return "";
  return rel < 10 ? ` (${format(rel, ".0%")} of the answer)` : ` (${fmtNumber(rel, ".3g")} times the answer)`;
}

const whose = (q) => q.whose || "the chapter's answer";

// A difference between two values in the question's unit: a percentage's is in points (50% - 33.7% is 16.3 points)
function diffText(x, q, fmt) {
  return q.unit === "%" ? `${fmtNumber(x, fmt)} points` : fmtNumber(x, fmt, q.unit);
}

// The line once a number is revealed: [close, text]
export function verdict(q, guess) {
  const tol = q.tolerance ?? (q.answer !== 0 ? 0.05 * Math.abs(q.answer) : 0.01);
  const c = closeness(guess, q.answer, tol);
  const fmt = q.fmt ?? ".4g";
  const rel = q.unit === "%" ? "" : relText(c.rel_err); // a share of a share reads as a third percentage: left out
  const text = `Your guess ${guessText(guess, q)}, ${whose(q)} ${fmtNumber(q.answer, fmt, q.unit)}: ` +
    `off by ${diffText(c.abs_err, q, fmt)}${rel}, ${c.close ? "within" : "not within"} ±${diffText(tol, q, fmt)}` +
    `${c.close ? ": close" : ""}.`; // prettier-ignore
  return [c.close, text];
}

// A guess as the reader typed it: in the question's format, unless that would round away a digit they typed
// (0.34 in a box of whole percents is "0.34%", not "0.3%")
export function guessText(guess, q) {
  const t = fmtNumber(guess, q.fmt ?? ".4g", q.unit);
  return Number.parseFloat(t) === guess || Math.abs(guess) >= COMPACT ? t : fmtNumber(guess, ".6g", q.unit);
}

// A percentage typed as a fraction (0.34 for 34%): said beside the box, since the box takes percent
export function fractionHint(q, guess) {
  if (q.unit !== "%" || !(guess > 0 && guess < 1) || Math.abs(q.answer) < 1) return null;
  return `This box takes percent: ${fmtNumber(guess, ".6g")} reads as ${fmtNumber(guess, ".6g")}%. For ` +
    `${fmtNumber(guess * 100, ".6g")}% type ${fmtNumber(guess * 100, ".6g")}.`; // prettier-ignore
}

// the answer as the page writes it
export function answerText(q) {
  return (q.kind ?? "number") === "number" ? fmtNumber(q.answer, q.fmt ?? ".4g", q.unit) : String(q.answer);
}

// What a reader would take for the answer if it were on screen before the Reveal: the answer as the page writes
// it, and a number's roundings that keep two significant digits (0.0157 is also "0.016"; 33.7% also "34%"). The
// browser tests look for these on the page while the question is open (tests/fixtures/invariants.js, answers).
export function tells(q) {
  if ((q.kind ?? "number") !== "number") return [];
  const out = new Set([answerText(q)]);
  for (let d = 0; d <= 4; d++) {
    const t = fmtNumber(q.answer, `.${d}f`, q.unit);
    const digits = t.replace(/[^0-9]/g, "").replace(/^0+/, "");
    if (digits.length >= 2 && Number.parseFloat(t) !== 0) out.add(t);
  }
  return [...out];
}

// The line outside predict mode, under the question
export function answerLine(q) {
  const who = whose(q);
  return `${who[0].toUpperCase()}${who.slice(1)}: ${answerText(q)}.${q.explain ? ` ${q.explain}` : ""}`;
}

// The line once a choice is revealed: [right, text]
export function choiceVerdict(q, pick) {
  const right = pick === q.answer;
  return [right, right ? `Right: ${q.answer}.` : `Not quite: you picked “${pick}”; ${whose(q)} is ${q.answer}.`];
}

// The warning for a guess outside the accepted range, or null
export function outside(q, guess) {
  const [lo, hi] = answerRange(q.answer, q.unit, q.lo, q.hi);
  if (Number.isFinite(guess) && guess >= lo && guess <= hi) return null;
  const fmt = q.fmt ?? ".4g";
  return `A guess must be a number from ${fmtNumber(lo, fmt, q.unit)} to ${fmtNumber(hi, fmt, q.unit)}; ` +
    `${fmtNumber(guess, fmt, q.unit)} is outside that range. Try again.`; // prettier-ignore
}

// Class mode (assets/js/class_mode.js, the app's classes) watches every box: it may hold a box's button (a student's
// guess goes to the lecturer; the lecturer's asks the class, then reveals to everyone), add its panel under the box
// (drawn), and reveal or reopen a box when the lecturer does. `hold(box)` gives null (the box as it is) or
// {label, enabled, caption, sent, noGuess, send(guess)}.
let watcher = null;
export function watchQuestions(w) {
  watcher = w;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// The box: a question, a number input and Reveal; after the reveal the verdict, the explanation and Guess again.
// revealed stays true (for any later question of the page: another setting) until Guess again.
export class PredictBox {
  constructor(parent, onReveal) {
    this.box = el("div", "gp-predict");
    this.box.hidden = true;
    parent.appendChild(this.box);
    this.onReveal = onReveal;
    this.revealed = false;
    this.forced = false; // revealed by the lecturer, with or without a guess (class mode)
    this.guess = null;
  }

  ask(q) {
    this.q = q;
    this.box.hidden = !q;
    this.box.replaceChildren();
    this.register(q);
    if (!q) return;
    const p = el("p");
    p.append(el("strong", "", "Predict first. "), document.createTextNode(q.question));
    this.box.append(p);
    if (this.revealed && (this.guess !== null || this.forced)) return this.showAnswer();
    const held = watcher ? watcher.hold(this) : null;
    if (held && held.noGuess) return this.askHeld(held);
    if (q.kind === "choice") return this.askChoice(q, held);
    const label = el("label", "gp-guess-label", "Your guess" + (q.unit && q.unit.trim() ? ` (${q.unit.trim()})` : ""));
    const input = el("input", "gp-guess");
    input.type = "number";
    input.step = "any";
    input.placeholder = q.unit === "%" ? "in percent, e.g. 25" : "type a number";
    input.id = `gp-guess-${Math.random().toString(36).slice(2)}`;
    label.htmlFor = input.id;
    if (this.guess !== null) input.value = String(this.guess);
    input.disabled = !!(held && held.sent);
    const warn = el("p", "gp-warn");
    warn.hidden = true;
    const hint = el("p", "gp-warn gp-hint");
    hint.hidden = true;
    const reveal = el("button", "gp-btn", held ? held.label : "Reveal");
    reveal.type = "button";
    const check = () => {
      const g = input.value.trim() === "" ? NaN : input.valueAsNumber;
      const why = Number.isNaN(g) ? null : outside(q, g);
      warn.textContent = why || "";
      warn.hidden = !why;
      const fraction = Number.isNaN(g) || why ? null : fractionHint(q, g);
      hint.textContent = fraction || "";
      hint.hidden = !fraction;
      this.guess = Number.isNaN(g) || why ? null : g;
      reveal.disabled = this.guess === null || !!(held && !held.enabled);
      reveal.title = this.guess === null ? "enter a guess first" : "";
    };
    input.addEventListener("input", check);
    reveal.addEventListener("click", () => this.pressed(held));
    check();
    this.box.append(label, input, warn, hint, reveal, el("p", "gp-caption", held ? held.caption : "The answer (and the chart) appear once you have guessed."));
    if (watcher) watcher.drawn(this);
  }

  // Reveal, or what class mode does instead (send the guess to the lecturer)
  pressed(held) {
    if (this.guess === null) return;
    if (held) held.send(this.guess);
    else this.reveal();
  }

  reveal() {
    this.revealed = true;
    this.showAnswer();
    this.onReveal();
  }

  // Class mode: the lecturer revealed the answer, on every screen, guessed or not
  forceReveal() {
    this.forced = true;
    this.reveal();
  }

  // Ask again (Guess again; class mode: the lecturer's next round)
  reopen() {
    this.revealed = false;
    this.forced = false;
    this.guess = null;
    this.ask(this.q);
    this.onReveal();
  }

  // Class mode's lecturer: the question and the class's button, no guess of their own
  askHeld(held) {
    const b = el("button", "gp-btn", held.label);
    b.type = "button";
    b.disabled = !held.enabled;
    b.addEventListener("click", () => held.send(null));
    this.box.append(b, el("p", "gp-caption", held.caption));
    if (watcher) watcher.drawn(this);
  }

  // a choice: the options as radio buttons under "Your answer"
  askChoice(q, held = null) {
    const fs = el("fieldset", "gp-choice");
    fs.append(el("legend", "", "Your answer"));
    const name = `gp-choice-${Math.random().toString(36).slice(2)}`;
    const reveal = el("button", "gp-btn", held ? held.label : "Reveal");
    reveal.type = "button";
    reveal.disabled = this.guess === null || !!(held && !held.enabled);
    q.options.forEach((o, i) => {
      const r = el("input");
      Object.assign(r, { type: "radio", name, id: `${name}-${i}`, value: String(i), checked: this.guess === o,
        disabled: !!(held && held.sent) }); // prettier-ignore
      r.addEventListener("change", () => {
        this.guess = o;
        reveal.disabled = !!(held && !held.enabled);
      });
      const l = el("label", "gp-option", o);
      l.htmlFor = r.id;
      fs.append(r, l);
    });
    reveal.addEventListener("click", () => this.pressed(held));
    this.box.append(fs, reveal, el("p", "gp-caption", held ? held.caption : "The answer (and the chart) appear once you have guessed."));
    if (watcher) watcher.drawn(this);
  }

  showAnswer() {
    // the question stays; the guess's input and Reveal give way to the verdict (and Guess again)
    this.box.replaceChildren(...[...this.box.children].slice(0, 1));
    this.register(this.q);
    if (this.guess === null) { // revealed by the lecturer to someone who had not guessed (class mode)
      this.box.append(el("p", "gp-caption ls-answer", answerLine(this.q)));
    } else {
      const [close, text] = this.q.kind === "choice" ? choiceVerdict(this.q, this.guess) : verdict(this.q, this.guess);
      this.box.append(el("p", close ? "gp-close" : "gp-far", text));
      if (this.q.explain) this.box.append(el("p", "", this.q.explain));
    }
    if (!watcher || !watcher.hold(this)) { // in a class the lecturer starts the next round
      const again = el("button", "gp-btn", "Guess again");
      again.type = "button";
      again.addEventListener("click", () => this.reopen());
      this.box.append(again);
    }
    if (watcher) watcher.drawn(this);
  }

  // The page's open questions, for the browser tests (window.grpoQuestions): the question, what would tell its
  // answer, and whether it is revealed
  register(q) {
    const all = (window.grpoQuestions = window.grpoQuestions || new Set());
    if (this.entry) all.delete(this.entry);
    this.entry = q ? { question: q.question, texts: tells(q), revealed: this.revealed && (this.guess !== null || this.forced) } : null;
    if (this.entry) all.add(this.entry);
  }

  // may the charts show? (no question, or revealed)
  get open() {
    return !this.q || this.revealed;
  }
}
