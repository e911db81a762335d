"""Record the example pool of the Your prompts page: the shipped SFT TinyLM's pass rates on training prompts.

    python scripts/record_example_pool.py                  # 512 training prompts x 64 samples (~10 s)
    python scripts/record_example_pool.py --out PATH --prompts 8 --samples 4   # a tiny check

Writes a CSV with one row per prompt, `prompt,correct,samples` (c of n samples of the base model correct), the
file `python -m sim plan` and pages/your_prompts.py read. The prompts are a seeded draw from TinyLM's training
split (sim.tinylm.data.split); the counts come from sim.tinylm.evaluate.sample_correct_counts, the evaluation the
TinyLM story uses, on the shipped checkpoint (assets/data/tinylm_sft.pt).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.export import rows_csv  # noqa: E402
from sim.runtime.files import write_atomically  # noqa: E402
from sim.tinylm.checkpoint import ASSET, load_checkpoint  # noqa: E402
from sim.tinylm.data import prompt_text, split  # noqa: E402
from sim.tinylm.evaluate import sample_correct_counts  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "assets" / "data" / "examples" / "tinylm_prompts.csv"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT), help=f"where to write (default {OUT})")
    ap.add_argument("--prompts", type=int, default=512, help="training prompts drawn (seed 0)")
    ap.add_argument("--samples", type=int, default=64, help="samples per prompt")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    train, _ = split()
    pick = np.sort(np.random.default_rng(0).choice(len(train), size=args.prompts, replace=False))
    problems = train[pick]  # (P, 2)
    model = load_checkpoint(ASSET)[0]
    c = sample_correct_counts(model, problems, args.samples, torch.Generator().manual_seed(0))  # (P,)
    rows = [{"prompt": prompt_text(int(a), int(b)), "correct": int(k), "samples": args.samples}
            for (a, b), k in zip(problems, c, strict=True)]
    write_atomically({Path(args.out): rows_csv(rows).encode()})
    print(f"{args.out}: {len(rows)} prompts, mean pass rate {c.mean() / args.samples:.3f}, "
          f"{int((c == 0).sum())} never solved, {int((c == args.samples).sum())} always solved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
