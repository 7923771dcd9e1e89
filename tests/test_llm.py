import json

import pytest
from pydantic import BaseModel

from company_ai.resources.llm import LLMResource, ModelError
from tests.fakes import FakeServer, Reply, ollama_chat


class Finding(BaseModel):
    summary: str
    headcount: int


def ask(llm):
    return llm.structured(
        system="Summarise.",
        prompt="Acme has 40 staff.",
        schema=Finding,
        offline=lambda: {"summary": "Acme (offline)", "headcount": 40},
    )


def test_the_offline_backend_answers_deterministically_and_is_validated():
    assert ask(LLMResource()) == Finding(summary="Acme (offline)", headcount=40)
    with pytest.raises(ValueError, match="headcount"):
        LLMResource().structured(
            system="", prompt="", schema=Finding, offline=lambda: {"summary": "x"}
        )
    assert LLMResource().source == "model:offline"


def test_ollama_gets_the_schema_as_format_and_its_answer_is_validated():
    with FakeServer() as server:
        server.script("/api/chat", Reply(ollama_chat('{"summary": "Acme", "headcount": 40}')))
        llm = LLMResource(backend="ollama", host=server.url, backoff_s=0)
        assert ask(llm) == Finding(summary="Acme", headcount=40)
        path, request = server.requests[0]
        assert request["model"] == "qwen3:8b"
        assert request["format"] == Finding.model_json_schema()
        assert request["messages"][1] == {"role": "user", "content": "Acme has 40 staff."}
        assert llm.source == "model:qwen3:8b"


def test_malformed_json_is_retried_and_then_accepted():
    with FakeServer() as server:
        server.script(
            "/api/chat",
            Reply(ollama_chat('{"summary": "Acme", "headc')),
            Reply(ollama_chat(json.dumps({"summary": "Acme", "headcount": "forty"}))),
            Reply(ollama_chat('{"summary": "Acme", "headcount": 40}')),
        )
        assert ask(LLMResource(backend="ollama", host=server.url, backoff_s=0)).headcount == 40
        assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("reply", "complaint"),
    [
        (Reply(ollama_chat("not json at all")), "invalid output"),
        (Reply(ollama_chat("")), "invalid output"),
        (Reply({"error": "model 'qwen3:8b' not found"}, status=404), "not found"),
        (Reply(ollama_chat("{}"), delay_s=1.0), "timed out"),
    ],
)
def test_a_model_that_keeps_failing_is_a_model_error(reply, complaint):
    with FakeServer() as server:
        server.script("/api/chat", reply)
        llm = LLMResource(
            backend="ollama", host=server.url, backoff_s=0, timeout_s=0.2, max_attempts=2
        )
        with pytest.raises(ModelError, match=complaint):
            ask(llm)
        assert len(server.requests) == 2


def test_an_unreachable_server_is_a_model_error():
    llm = LLMResource(backend="ollama", host="http://127.0.0.1:9", backoff_s=0, max_attempts=1)
    with pytest.raises(ModelError, match="failed 1 times"):
        ask(llm)


def test_a_model_that_invents_facts_is_answered_validly_and_caught_by_the_gate():
    from company_ai.core.outreach.drafting import Draft, judge_draft

    material = ["CRM: Ada Lovelace, CTO at Bluewind Logistics Ltd, Leeds.", "Bluewind employs 80."]
    invented = {
        "subject": "Ada, about Bluewind",
        "body": "Hi Ada,\n\nBluewind employs 80 people and grew 45% after hiring Tim Cook.\n",
        "angle": "growth",
    }
    with FakeServer() as server:
        server.script("/api/chat", Reply(ollama_chat(json.dumps(invented))))
        llm = LLMResource(backend="ollama", host=server.url, backoff_s=0)
        draft = llm.structured(
            system="Write.", prompt="\n".join(material), schema=Draft, offline=dict
        )
    assert draft.body == invented["body"]  # valid JSON: the resource cannot know it lies
    verdict = judge_draft(draft.subject, draft.body, material, allow=["Sam Rivers"])
    assert [(c["field"], c["text"], c["kind"]) for c in verdict.to_json()] == [
        ("body", "45%", "percent"),
        ("body", "Tim Cook", "person"),
    ]
