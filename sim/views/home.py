"""The front page, written once: the app's home and a lesson's contents page draw this document with the same
renderer (assets/js/doc.js). What GRPO is in plain words, where to start, one iteration as four steps, every page
with what it shows, and the chapter's exercises with the page that works each (and its question-first link).

    blocks = document()                       # the app's home; a lesson adds its own line (`lesson=`)
"""

from __future__ import annotations

from sim.views.catalog import EXERCISES, PAGES, view
from sim.views.doc import Caption, Columns, Formula, Heading, Link, Links, Note, Text

FIRST = "one_group"  # where a newcomer starts: the chapter's worked example
PATH = ("one_group", "wasted", "training")  # the first three pages, in the order "Start here" names them

INTRO = Text.of(
    "**GRPO** (Group Relative Policy Optimization) is how reasoning models learn from a checker instead of a "
    "reward model. For each prompt it samples a **group** of G answers, a program scores each one 1 (right) or 0 "
    "(wrong), and each answer is pushed up or down by how much better it did than the other answers of its group. "
    "The group's average plays the part of PPO's critic, the second network that would otherwise learn what a "
    "prompt's answers are worth."
)
ADVANTAGE = Formula(r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}",
                    "Â(i) = (r(i) − mean(r)) / (std(r) + ε)")
ADVANTAGE_WORDS = Caption("Â, the answer's advantage: above 0 if it beat its group, below 0 if it did worse, 0 for "
                          "every answer of a group that all got the same reward. ε is a tiny number that keeps such a "
                          "group at 0 instead of 0/0.")
STEPS = (
    ("1. Sample", "G answers to each prompt from the model as it is now."),
    ("2. Verify", "A program checks each answer: reward 1 if right, 0 if wrong."),
    ("3. Compare", "Each answer's advantage Â: its reward minus its group's mean, divided by the group's spread."),
    ("4. Update", "Make the answers with Â above 0 more likely and the others less likely, in small steps: PPO's "
                  "clip caps how far one step moves, and an optional penalty β keeps the model near where it "
                  "started."),
)


def start_here() -> list:
    titles = [view(n).title for n in PATH]
    return [
        Heading("Start here"),
        Text(f"New to GRPO? Open {titles[0]} first: the chapter's worked example, four answers to 37 + 48, their "
             f"advantages and what each token of each answer gets. Then {titles[1]} (why some groups teach nothing) "
             f"and {titles[2]} (24 prompts learning while you watch); the other pages follow in the list below."),
        Link(FIRST, f"Start with {titles[0]}"),
    ]


def pages(names, notes: dict[str, str]) -> list:
    """The pages `names` with what each shows (and, in a lesson, how the lesson has it: `notes` by name)."""
    def what(name: str) -> str:
        return view(name).what + (f" ({notes[name]})" if name in notes else "")

    return [Heading("The pages"), Links([Link(n, view(n).title, what=what(n)) for n in names])]


def workbook(names) -> list:
    """Each exercise and lab task of the chapter worked on one of the pages `names`, that page, and the same page as a
    question first."""
    out = [Heading("The chapter's exercises and lab"),
           Caption("Each item of the chapter with the page that works it; “as a question” opens the page asking "
                   "first (?predict=1): the answer and its chart appear once you have guessed.")]
    out.append(Links([Link(e.page, view(e.page).title, before=f"{e.item}: {e.task}:",
                           also=(("as a question", {"predict": "1"}),) if e.question else ())
                      for e in EXERCISES if e.page in names]))
    return out


def document(*, lesson: str = "", notes: dict[str, str] | None = None, names=None) -> list:
    """The front page's blocks; a lesson's contents page adds `lesson` (what this folder holds, after the intro),
    `notes` (how it has each page, by name) and `names` (the views it has, pages or not: default every view)."""
    names = [p.name for p in PAGES] if names is None else [p.name for p in PAGES if p.name in set(names)]
    out = [INTRO, *start_here(), Heading("One iteration of GRPO"), ADVANTAGE, ADVANTAGE_WORDS,
           Columns([[Text(f"{head}. {words}", f"**{head}.** {words}")] for head, words in STEPS])]
    if lesson:
        out.append(Note(lesson))
    out += [*pages(names, notes or {}), *workbook(names),
            Caption("Every setting lives in the address bar: copy it to hand out the exact setup, seed included. Add "
                    "classroom=1 for presenter sizes, hide=G,beta to hide controls, predict=1 to ask before the "
                    "answer is shown.")]
    return out
