from petrichor_serving.agent.citations import renumber as _renumber


def test_markers_are_renumbered_in_order_of_use_and_unchecked_ones_dropped():
    cites = [{"marker": 3, "quote": "b"}, {"marker": 1, "quote": "a"}]
    text, out = _renumber("First [3]. Second [2]. Third [1].", cites)
    assert text == "First [1]. Second. Third [2]."
    assert [(c["marker"], c["quote"]) for c in out] == [(1, "b"), (2, "a")]
