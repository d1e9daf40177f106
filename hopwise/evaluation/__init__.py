"""`hopwise eval`: multi-hop retrieval and answer quality on NAME.corpus/questions.jsonl sets."""

from hopwise.evaluation.run import EvalResult, evaluate

__all__ = ["EvalResult", "evaluate"]
