"""Before a suite runs: its checked configuration (a replay's recorded settings filled in)
and its case list (the dataset or the given cases, sampled and limited; under a replay, the
cases it recorded)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any, TypeVar

from casework.config import Settings
from casework.errors import InputError
from casework.evals.cassettes import case_filename, replay_source
from casework.evals.datasets import dataset_digest, load_dataset, resolve_dataset
from casework.evals.evalconfig import EvalConfig
from casework.evals.suite import EvalCase, EvalSuite
from casework.runtime.batch import BatchConfig, check_batch_config

__all__ = ["checked_config", "replayed_cases", "run_cases", "sample_cases"]


def checked_config(config: EvalConfig, settings: Settings) -> tuple[EvalConfig, Path | None]:
    """(the config, the replay's cassette folder): one sentence for a setting out of range; a
    ``replay:FOLDER`` model and ``replay`` runs take the recorded strategy, judge and dataset
    where the config names none."""
    if config.concurrency < 1:
        raise InputError("Concurrency must be at least 1.")
    if config.limit is not None and config.limit < 1:
        raise InputError("Limit must be at least 1.")
    if config.sample is not None and config.sample < 1:
        raise InputError("Sample must be at least 1.")
    if config.case_hook is not None and (config.executor != "local" or config.concurrency != 1):
        raise InputError(
            "A run that learns from each case feeds them in order: use the local executor at "
            "concurrency 1."
        )
    check_batch_config(
        BatchConfig(executor=config.executor, address=config.address, retries=config.retries)
    )
    model = config.model
    if model and model.startswith("replay:") and Path(model.partition(":")[2]).is_dir():
        config = dataclasses.replace(config, replay=model.partition(":")[2], model=None)
    replay_dir: Path | None = None
    if config.replay is not None:
        if config.record:
            raise InputError("Use --record or --replay, not both.")
        replay_dir, recorded = replay_source(config.replay, settings)
        updates: dict[str, Any] = {
            "strategy": config.strategy or recorded.get("strategy"),
            "judge_model": config.judge_model or recorded.get("judge_model"),
        }
        dataset = recorded.get("dataset")
        if config.dataset is None and config.cases is None and dataset and Path(dataset).is_file():
            updates["dataset"] = dataset
        config = dataclasses.replace(config, **updates)
    return config, replay_dir


def replayed_cases(
    case_list: list[EvalCase], replay_dir: Path | None
) -> tuple[list[EvalCase], int]:
    """(the cases to run, how many were left out): a replay answers only the cases it
    recorded."""
    if not case_list:
        raise InputError("There are no cases to run.")
    replay_skipped = 0
    if replay_dir is not None:
        recorded_cases = [
            c for c in case_list if (replay_dir / f"{case_filename(c.id)}.jsonl").is_file()
        ]
        replay_skipped = len(case_list) - len(recorded_cases)
        if not recorded_cases:
            raise InputError(
                f"None of the {len(case_list)} cases has a cassette in {replay_dir}; replay the dataset that was recorded."
            )
        case_list = recorded_cases
    return case_list, replay_skipped


T = TypeVar("T")


def sample_cases(cases: list[T], n: int | None, seed: int = 0) -> list[T]:
    """``n`` cases drawn at random (seeded), in their dataset order; all when ``n`` is None
    or not smaller than the dataset."""
    if n is None or n >= len(cases):
        return cases
    keep = sorted(random.Random(seed).sample(range(len(cases)), n))
    return [cases[i] for i in keep]


def run_cases(suite: EvalSuite, config: EvalConfig) -> tuple[list[EvalCase], str, str]:
    """(cases, dataset name, digest) of the run."""
    limit = config.limit
    if config.cases is not None:
        digest = hashlib.sha256(
            json.dumps(
                [[c.id, c.inputs, c.expected] for c in config.cases], sort_keys=True, default=str
            ).encode()
        ).hexdigest()
        case_list = sample_cases(list(config.cases), config.sample, config.seed)
        # Cases an app built from its options (`--roster FILE --dataset FILE.jsonl`) name the
        # file they came from; only cases given in code have none.
        name = str(resolve_dataset(suite, config.dataset)) if config.dataset else "(in memory)"
        return (case_list[:limit] if limit else case_list), name, digest
    path = resolve_dataset(suite, config.dataset)
    if config.sample is None:
        cases = load_dataset(path, limit=limit, read_case=suite.read_case)
        return cases, str(path), dataset_digest(path)
    case_list = sample_cases(
        load_dataset(path, read_case=suite.read_case), config.sample, config.seed
    )
    return (case_list[:limit] if limit else case_list), str(path), dataset_digest(path)
