"""Fencing: when two attempts of one run overlap, only the newest may commit.

Airflow can start a retry while the previous attempt still runs (a worker that stopped
heart-beating), and two command-line runs may be given the same run id. Every two-phase sink
therefore follows these rules:

* before it stages anything, an attempt takes an **attempt token** for its (run, pipeline, sink,
  table): a number allocated atomically in the target's own commit log, greater than every token
  handed out before for that key;
* its staging is named by the token, so attempts never write, replace or delete each other's
  staging (a newer attempt may discard the staging of older tokens: they can never commit);
* its commit is **conditional**: in the commit's transaction (or under the target's commit lock)
  the token must still be the newest; an attempt overtaken by a newer one aborts with
  :class:`Superseded` and records nothing;
* a commit checks that the staging holds what the attempt wrote (rows, or files and bytes) and
  refuses with :class:`StagingMismatch` otherwise; the commit record holds what was moved.
"""

from __future__ import annotations

from .errors import PipelineError


class Superseded(PipelineError):
    """A newer attempt of the same run took the target's attempt token: this attempt must not
    commit. Transient: a retry takes a new token (and finds the newer attempt's commit, if any)."""

    kind = "superseded"

    def __init__(self, what: str, mine: int, newest: int, plugin: str | None = None, pipeline: str | None = None):
        self.mine, self.newest = mine, newest
        super().__init__(f"attempt token {mine} for {what} was superseded by token {newest} (another attempt of "
                         "the same run id is writing it): this attempt committed nothing and its staging was "
                         "discarded", plugin, pipeline)


class StagingMismatch(PipelineError):
    """The staging no longer holds what this attempt wrote: nothing is committed (transient)."""

    kind = "staging"
