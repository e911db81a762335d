"""A view, declared once: its controls, its words, its questions and its charts, for both hosts.

    VIEW = View("wasted", "Wasted groups", intro=Text("If a prompt is solved ..."),
                controls=(Num.of(Settings, "p"), Num.of(ToyConfig, "group_size", hi=64)), show=show)

    def show(values: dict, lab=None) -> list[Block]:      # the values of the controls, by URL key
        return [Formula(r"P = p^G + (1 - p)^G", "P = p^G + (1 − p)^G"),
                Ask("wasted_g8", Question("...?", answer=33.7, unit="%"), then=[
                    Metrics([("P(signal)", "33.7%")]), Charts("wasted", [Chart(...)]), Caption("...")])]

`show` computes the view's document for one setting: a list of blocks, plain data. Two hosts draw it: the app
(ui/view.py: Streamlit's widgets, the charts through the shared JavaScript, assets/js/player_charts.js) and a lesson
(sim/lesson writes the page; assets/js/doc.js draws the same blocks). Where a lesson computes the view in the page,
its JavaScript twin (assets/js/views.js) returns the same document, block for block and word for word
(tests/test_js_views.py). Every text here is plain text: a host shows it as text, never as markup; the app's
nicer rendition (Markdown, LaTeX) of a text or formula is declared beside it (`md`, `latex`), and a lesson shows
the plain text.

Blocks (`to_json` is what a lesson and the JavaScript twin hold):
  Heading(text, level)               a section's heading (level 2), or a part's (3)
  Text(text, md=None)                a paragraph; `md`: the app's Markdown for it (with $math$)
  Formula(latex, text)               an equation: LaTeX in the app, the plain text in a lesson
  Caption(text)                      small print under a chart or a table
  Metrics([(label, value, delta?)])  a row of numbers, already formatted
  Charts(key, charts, columns, T)    charts of the one chart spec (sim/player/spec.py), drawn whole (or played
                                     over T iterations by the player)
  Table(key, columns, rows, title)   a small table; cells are numbers or text
  Note(text, tone)                   a boxed remark: "info", "success", "warning" or "error"
  Ask(key, question, then)           predict, then reveal: `then` waits for a guess in predict mode (?predict=1)
  Columns([blocks, blocks])          side by side (stacked on a narrow screen)
  Live(key, request)                 a part the browser computes with the toy engine (assets/js/live.js)
  Link(page, label, icon)            a link to another page of the app (the app only)
  Verdict(comparison, what, task)    a student's lab function against the reference (the app only, lab mode)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sim.player import build_payload
from sim.player.spec import Chart
from sim.views.controls import Spec, defaults
from sim.views.controls import to_json as control_json


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 2: a section; 3: a part of one


@dataclass(frozen=True)
class Text:
    text: str
    md: str | None = None  # the app's rendition (Markdown, $math$); None: the text itself


@dataclass(frozen=True)
class Formula:
    latex: str
    text: str


@dataclass(frozen=True)
class Caption:
    text: str


@dataclass(frozen=True)
class Metrics:
    items: Sequence[tuple]  # (label, value) or (label, value, delta): text, formatted by the view


@dataclass(frozen=True)
class Charts:
    key: str
    charts: Sequence[Chart]
    columns: int = 1
    T: int = 1  # > 1: charts over a run's iterations, with the player's Play bar (a recorded run replayed)


@dataclass(frozen=True)
class Table:
    key: str
    columns: Sequence[str]
    rows: Sequence[Sequence]  # cells: numbers (already rounded) or text
    title: str | None = None


@dataclass(frozen=True)
class Note:
    text: str
    tone: str = "info"  # "info", "success", "warning", "error"


@dataclass(frozen=True)
class Question:
    """A predict-first question (ui/predict.py's and assets/js/predict.js's keywords)."""

    question: str
    answer: object
    kind: str = "number"  # or "choice" (answer one of options)
    options: Sequence[str] = ()
    tolerance: float | None = None
    unit: str | None = None
    explain: str | None = None
    fmt: str = "{:.4g}"
    lo: float | None = None
    hi: float | None = None


@dataclass(frozen=True)
class Ask:
    key: str
    question: Question
    then: Sequence = ()


@dataclass(frozen=True)
class Columns:
    columns: Sequence[Sequence]


@dataclass(frozen=True)
class Live:
    key: str
    request: Mapping  # {"view": what assets/js/view_runs.js computes, "config": the config's fields, ...}


@dataclass(frozen=True)
class Link:
    page: str  # the app's page file, e.g. "pages/your_prompts.py"
    label: str
    icon: str | None = None


@dataclass(frozen=True)
class Verdict:
    comparison: object  # sim.lab.runner.Comparison
    what: str
    lab: object = None  # the Lab: its check names the mistake
    task: str | None = None


Block = Heading | Text | Formula | Caption | Metrics | Charts | Table | Note | Ask | Columns | Live | Link | Verdict
APP_ONLY = (Link, Verdict)  # blocks a lesson leaves out: they need the app's pages or its server


@dataclass(frozen=True)
class View:
    """One view of the playground: what both hosts read to draw it.

    name        the app's page (pages/NAME.py, /NAME) and the lesson's file (NAME.html)
    title       the page's heading, in both hosts
    intro       the text under the title (`fold_intro`: under "What this page shows", so the charts come first)
    controls    the sidebar's controls, in order (sim/views/controls.py), each a declared setting
    show        values (by URL key) -> the document, computed by sim: the reference (None: an app-only page whose
                parts the app draws itself, e.g. an upload)
    presets     name -> the settings it changes, by URL key (the rest go back to their defaults)
    what        one line for the contents (the app's home, the lesson's index)
    lesson      how a lesson has it: "page" (computed in the page, assets/js/views.js), "recorded" (computed by sim
                when the lesson is built) or "app" (the app only: it needs a visitor's file or the server)
    """

    name: str
    title: str
    intro: Text | None = None
    controls: Sequence[Spec] = ()
    show: Callable | None = None
    presets: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    what: str = ""
    lesson: str = "page"
    fold_intro: bool = False
    why_app_only: str = ""  # for lesson "app": why (the lesson's contents page says so)

    def __post_init__(self):
        keys = [c.key for c in self.controls]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.name}: two controls share a URL key: {keys}")
        if self.lesson not in ("page", "recorded", "app"):
            raise ValueError(f"{self.name}: lesson must be page, recorded or app, got {self.lesson!r}")
        for name, changes in self.presets.items():
            unknown = set(changes) - set(keys)
            if unknown:
                raise ValueError(f"{self.name}: preset {name!r} sets {sorted(unknown)}, which are not its controls")

    def defaults(self) -> dict[str, object]:
        return defaults(self.controls)

    def document(self, values: Mapping[str, object] | None = None, **host) -> list:
        """show() at these values (the others at their defaults)."""
        return self.show({**self.defaults(), **(values or {})}, **host)

    def manifest(self) -> dict:
        """What a lesson's page holds of the view: its title, intro, controls and presets (no data)."""
        return {"view": self.name, "title": self.title, "intro": None if self.intro is None else self.intro.text,
                "fold_intro": self.fold_intro, "controls": [control_json(c) for c in self.controls],
                "presets": [{"name": n, "values": dict(v)} for n, v in self.presets.items()]}


# ---- the document as data (a lesson's page, the JavaScript twin's comparison) ----

def question_json(q: Question) -> dict:
    return {"question": q.question, "answer": q.answer, "kind": q.kind, "options": list(q.options),
            "tolerance": q.tolerance, "unit": q.unit, "explain": q.explain, "fmt": q.fmt, "lo": q.lo, "hi": q.hi}


def to_json(blocks: Sequence, *, charts: Callable | None = None) -> list[dict]:
    """The blocks a lesson shows, as plain data; APP_ONLY blocks are left out. `charts(block)` turns a Charts
    block into its payload (default: sim/player's build_payload, arrays base64 float32)."""
    out = []
    for b in blocks:
        if isinstance(b, APP_ONLY):
            continue
        if isinstance(b, Charts):
            payload = (charts or chart_payload)(b)
            out.append({"kind": "charts", "key": b.key, "payload": payload})
        elif isinstance(b, Ask):
            out.append({"kind": "ask", "key": b.key, "question": question_json(b.question),
                        "then": to_json(b.then, charts=charts)})
        elif isinstance(b, Columns):
            out.append({"kind": "columns", "columns": [to_json(c, charts=charts) for c in b.columns]})
        elif isinstance(b, Metrics):
            out.append({"kind": "metrics", "items": [[str(x) for x in item] for item in b.items]})
        elif isinstance(b, Table):
            out.append({"kind": "table", "key": b.key, "title": b.title, "columns": [str(c) for c in b.columns],
                        "rows": [[_cell(c) for c in row] for row in b.rows]})
        elif isinstance(b, Live):
            out.append({"kind": "live", "key": b.key, "request": dict(b.request)})
        elif isinstance(b, (Text, Formula)):  # a lesson shows the plain text (the app: md, latex)
            out.append({"kind": type(b).__name__.lower(), "text": b.text})
        else:
            out.append({"kind": type(b).__name__.lower(), **{k: v for k, v in vars(b).items()}})
    return out


def chart_payload(b: Charts) -> dict:
    return build_payload(b.key, T=b.T, charts=b.charts, columns=b.columns, bar=b.T > 1)


def _cell(c):
    if isinstance(c, bool) or c is None:
        return str(c)
    if isinstance(c, (int, float)):
        return c
    return str(c)


def texts(blocks: Sequence, *, host: str = "lesson") -> dict[str, list[str]]:
    """Every title, caption and question a host shows for these blocks, in order (the drift tests' reading):
    {"headings", "captions" (captions, notes and chart captions), "questions", "chart_titles"}."""
    out = {"headings": [], "captions": [], "questions": [], "chart_titles": []}

    def walk(bs):
        for b in bs:
            if host == "lesson" and isinstance(b, APP_ONLY):
                continue
            if isinstance(b, Heading):
                out["headings"].append(b.text)
            elif isinstance(b, (Caption, Note)):
                out["captions"].append(b.text)
            elif isinstance(b, Charts):
                for c in b.charts:
                    out["chart_titles"].append(c.title)
                    if c.caption:
                        out["captions"].append(c.caption)
            elif isinstance(b, Ask):
                out["questions"].append(b.question.question)
                walk(b.then)
            elif isinstance(b, Columns):
                for c in b.columns:
                    walk(c)

    walk(blocks)
    return out


def plain(md: str) -> str:
    """The plain text of the project's own Markdown (bold, code spans, $math$ markers dropped): how a lesson
    writes a text the app shows as Markdown, when the two are the same words."""
    return re.sub(r"\*\*|`|\$", "", md)
