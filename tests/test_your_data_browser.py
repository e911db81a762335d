"""Your run and Your prompts in Chromium: a file uploaded on each page is read, its findings and charts render (Your
prompts' toy computed in the page), and text from the file (a column named `<b>x</b>`, a prompt `**x**`) shows
literally: no bold, no link, no markup.
Run: python -m pytest tests/test_your_data_browser.py -m e2e
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.serve import CHROMIUM, IDLE

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")]

MARKUP = ["<b>x</b>", "**x**", "[x](http://example.com)"]
# Elements that markup in the file would have made: <b>/<strong>/<em> around a bare x, or a link to example.com.
MADE = ("() => [...document.querySelectorAll('[data-testid=stMain] :is(b, strong, em, a)')]"
        ".filter(e => e.textContent.trim() === 'x' || (e.href || '').includes('example.com')).length")
CHARTS = "document.querySelectorAll('.gp-chart .js-plotly-plot').length >= 4"


@pytest.fixture
def page(server, browser):
    tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    yield tab
    tab.context.close()


def settle(page) -> None:
    page.wait_for_selector(IDLE, timeout=90_000)
    page.wait_for_timeout(700)
    page.wait_for_selector(IDLE, timeout=90_000)


def upload(page, path: Path) -> None:
    """As a reader does: open the uploader folded at the top of the page ("Upload your own: ..."), give the file."""
    page.get_by_test_id("stMain").get_by_text("Upload your own:", exact=False).first.click()
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    page.get_by_test_id("stText").filter(has_text=path.name).first.wait_for(timeout=90_000)  # "File: NAME": read
    settle(page)


def test_your_run_reads_an_upload_and_shows_its_text_literally(server, page, tmp_path):
    header = "train/global_step,train/reward,train/reward_std,train/frac_reward_zero_std,train/entropy," + ",".join(
        '"' + m.replace('"', '""') + '"' for m in MARKUP)
    rows = [f"{t},{0.3 + t / 100:.3f},0.46,0.6,{1 - t / 80:.4f},1,2,3" for t in range(1, 41)]
    path = tmp_path / "wandb_export.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    page.goto(f"{server}/your_run")
    settle(page)
    upload(page, path)
    main = page.get_by_test_id("stMain")
    assert main.get_by_text("File (CSV): wandb_export.csv").is_visible()
    note = main.get_by_text("Note: columns that are not GRPO metrics the rules read, ignored:")
    assert note.is_visible()
    for m in MARKUP:
        assert m in note.inner_text(), m
    assert page.evaluate(MADE) == 0
    main.get_by_text("Entropy falls", exact=False).first.wait_for(timeout=60_000)  # the findings render
    page.wait_for_function(CHARTS)  # the one chart spec, drawn by the shared JavaScript


def test_your_prompts_reads_an_upload_and_shows_its_prompts_literally(server, page, tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text("prompt,correct,samples\n" + "".join('"' + m.replace('"', '""') + '",0,16\n' for m in MARKUP)
                    + "".join(f"q{i},{i % 17},16\n" for i in range(40)))
    page.goto(f"{server}/your_prompts")
    settle(page)
    upload(page, path)
    main = page.get_by_test_id("stMain")
    listed = main.get_by_text("line 2: <b>x</b>", exact=False)
    listed.wait_for(timeout=60_000)  # the document, computed for the setting the page reports
    text = listed.inner_text()
    assert "line 3: **x**" in text and "line 4: [x](http://example.com)" in text
    assert page.evaluate(MADE) == 0
    assert main.get_by_text("Dead groups at G = 8").is_visible()
    page.wait_for_function(CHARTS)  # the one chart spec, drawn by the shared JavaScript


def test_a_log_over_the_old_1_mb_upload_cap_is_read(server, page, tmp_path):
    """server.maxUploadSize went 1 -> 20 MB: an 11 MB trainer_state.json of 10,000 steps uploads and is read."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from bench_your_data import trainer_state

    path = tmp_path / "trainer_state.json"
    path.write_bytes(trainer_state(10_000))
    assert path.stat().st_size > 10 * 2**20
    page.goto(f"{server}/your_run")
    settle(page)
    upload(page, path)
    page.wait_for_function("[...document.querySelectorAll('.ls-metric-value')].some(e => e.textContent === '10,000')",
                           timeout=90_000)  # the document's first number: its steps


def test_a_console_log_as_people_publish_it_is_read(server, page, tmp_path):
    """Issue 42: the console output of a real run (verl's, cut from a public repository: tests/fixtures/real_logs) is
    a file the page takes (.txt, .log, .out) and reads as the command line does."""
    real = Path(__file__).resolve().parent / "fixtures" / "real_logs" / "trl_console_rho1.00_seed42.log"
    path = tmp_path / real.name
    path.write_bytes(real.read_bytes())
    page.goto(f"{server}/your_run")
    settle(page)
    upload(page, path)
    main = page.get_by_test_id("stMain")
    assert main.get_by_text("File (console): trl_console_rho1.00_seed42.log").is_visible()
    main.get_by_text("Reward collapse:", exact=False).first.wait_for(timeout=60_000)
    page.wait_for_function(CHARTS)
