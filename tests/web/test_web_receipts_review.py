"""The receipts review provider on its own: paging, counts, and two reviewers at the same moment."""

from __future__ import annotations

import threading

from web_helpers import Site

from casework.apps.receipts.review import DECIDED, ReceiptsReview
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import WAITING, Cursor, ReviewFilters, ReviewProvider


def test_items_page_newest_first_and_counts(site: Site) -> None:
    provider = ReceiptsReview(site.settings, deps=site.deps)
    assert isinstance(provider, ReviewProvider)
    waiting = ReviewFilters(status=WAITING)
    assert provider.count(waiting) == 4 and provider.count(ReviewFilters(status=DECIDED)) == 0
    first = provider.items(waiting, limit=2)
    assert [i.sort_id for i in first] == [lab.id for lab in reversed(site.review)][:2]
    last = first[-1]
    rest = provider.items(waiting, limit=10, before=Cursor(last.created_at, last.sort_id))
    assert [i.sort_id for i in first + rest] == [lab.id for lab in reversed(site.review)]
    assert first[0].title.endswith("as LINE_TOTAL") and "62%" in first[0].summary


def test_two_reviewers_at_once_apply_exactly_one_decision(site: Site) -> None:
    provider = ReceiptsReview(site.settings, deps=site.deps)
    item = str(site.review[0].id)
    barrier = threading.Barrier(2)
    outcomes = {}

    def decide(name: str, action: str) -> None:
        barrier.wait()
        outcomes[name] = provider.decide(
            item, action, note="", edit=None, caller=Caller(9, name, Role.REVIEWER)
        )

    threads = [
        threading.Thread(target=decide, args=("ana", "approve")),
        threading.Thread(target=decide, args=("cy", "reject")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    applied = [name for name, o in outcomes.items() if o.applied]
    assert len(applied) == 1
    winner = applied[0]
    loser = "cy" if winner == "ana" else "ana"
    assert outcomes[loser].decided_by == winner
    assert outcomes[loser].outcome == outcomes[winner].outcome
    successors = [
        x
        for x in site.deps.repo.labels_for_word(site.review[0].word_pk)
        if x.replaces_id == site.review[0].id
    ]
    assert len(successors) == 1 and successors[0].validated_by == f"human:{winner}"
    detail = provider.get(item)
    assert (detail.actions, detail.decided_by, detail.item.status) == ([], winner, DECIDED)
