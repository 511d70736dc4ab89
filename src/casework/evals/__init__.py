"""Evaluation harness: datasets, runner, evaluators, reports."""

from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, StrategyOptions

__all__ = ["CaseOutput", "EvalCase", "EvalSuite", "StrategyOptions"]
