"""Answering: serving's offline answers, quoted verbatim from the evidence the agent has read.

`answers` picks the passages and the short answer, `answer_types` says what kind of answer a question
asks for, `overlap` tokenises for overlap scoring and `address` keeps instructions to the assistant out of
answers; `answerer.OfflineAnswerer` is the `AnswerModel` over them. Only serving answers: the build never
imports this package. Sentence splitting is `petrichor_core.text.prose`, which the build shares.
"""
