"""A LangGraph multi-agent graph whose agents share one swarm memory.

Run:  scripts/setup langgraph && .venv/bin/python examples/langgraph_team.py [ROOT]

A planner fans a question out to two researchers running in parallel; a reviewer then
reads what they found and closes the task. The agents are plain functions here (where
an LLM call would go is marked); what they share goes through two doors of one swarm:

* the graph's store is a ``SwarmStore`` (LangGraph's ``BaseStore`` over the swarm log):
  items every node, thread and process sees, with compare-and-swap on an item's version;
* each agent also shares findings as memories (``Swarm.agent(name).share``): the
  synthesizer folds them into facts, merging the two researchers' duplicate finding into
  one fact backed by both, which the reviewer recalls by meaning.

Run it twice on the same ROOT: the second run's reviewer sees the first run's facts too.
"""

from __future__ import annotations

import operator
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from synthesizer import Swarm
from synthesizer.integrations.langgraph import SwarmStore

NOTES = {  # what each researcher "finds" (an LLM with tools would produce these)
    "researcher-1": ["The login test fails when the cache TTL is under one minute"],
    "researcher-2": [
        "the login test fails when the cache TTL is under one minute.",  # the same finding
        "Deploys need two approvals",
    ],
}


class Team(TypedDict):
    question: str
    findings: Annotated[list[str], operator.add]  # parallel branches append
    answer: str


def main(root: str) -> int:
    swarm = Swarm.open(root)
    store = SwarmStore(swarm.log, index={"fields": ["text"]})

    def planner(state: Team, runtime: Runtime) -> dict[str, object]:
        # the task is an item with a version: whoever closes it must have read the latest
        runtime.store.put(("tasks",), "t1", {"text": state["question"], "status": "open"})
        return {}

    def researcher(name: str) -> Callable[[Team, Runtime], dict[str, object]]:
        agent = swarm.agent(name, session="graph")

        def node(state: Team, runtime: Runtime) -> dict[str, object]:
            found = NOTES[name]  # <- an LLM call with the question would go here
            for i, text in enumerate(found):
                runtime.store.put(("findings", name), f"n{i}", {"text": text})
                agent.share(text, category="finding", importance=0.8)
            return {"findings": found}

        return node

    def reviewer(state: Team, runtime: Runtime) -> dict[str, object]:
        me = swarm.agent("reviewer", session="graph")
        swarm.synthesize()  # decide the shared memories now (a running synthesizer would)
        hits = me.recall(state["question"], limit=1)
        best = hits[0].fact
        me.reinforce(best.id)
        items = runtime.store.search(("findings",), query=state["question"], limit=5)
        task = runtime.store.get(("tasks",), "t1")
        assert task is not None
        store.put(("tasks",), "t1", {**task.value, "status": "done"},
                  expected_version=task.version)  # fmt: skip  # CAS: refused if it moved
        answer = (
            f"{best.content} (fact {best.id}, backed by {', '.join(best.agents)};"
            f" {len(items)} store items about it)"
        )
        return {"answer": answer}

    graph = StateGraph(Team)
    graph.add_node("planner", planner)
    graph.add_node("researcher-1", researcher("researcher-1"))
    graph.add_node("researcher-2", researcher("researcher-2"))
    graph.add_node("reviewer", reviewer)
    graph.add_edge(START, "planner")
    graph.add_edge("planner", "researcher-1")
    graph.add_edge("planner", "researcher-2")
    graph.add_edge(["researcher-1", "researcher-2"], "reviewer")
    graph.add_edge("reviewer", END)
    app = graph.compile(store=store)

    out = app.invoke({"question": "Why does the login test fail?", "findings": []})
    print("findings:", *out["findings"], sep="\n  ")
    print("answer:", out["answer"])
    task = store.get(("tasks",), "t1")
    facts = swarm.state().facts
    login = [f for f in facts.values() if "login test" in f.content.lower()]
    print(f"task t1: {task.value['status'] if task else None} (version {task and task.version})")
    print(f"{len(facts)} facts in the swarm; the login finding is backed by {login[0].agents}")
    ok = (
        task is not None
        and task.value["status"] == "done"
        and len(login) == 1
        and {"researcher-1", "researcher-2"} <= set(login[0].agents)
    )
    store.close()
    swarm.close()
    print("ok" if ok else "UNEXPECTED RESULT")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(main(str(Path(tmp) / "swarm")))
