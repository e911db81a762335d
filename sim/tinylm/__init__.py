"""TinyLM: a small transformer that learns two-digit addition, SFT then GRPO against a verifier."""
