"""Function words: words that say how a text is put, not what it is about, in English and Chinese.

`ENGLISH` and `CHINESE` are the offline model's (it never treats them as terms) and what most readers of
questions and passages leave out. Kept short on purpose: the lists only need to stop question words,
pronouns, auxiliaries, glue words and a few common verbs and adjectives (which end a noun phrase) from
becoming "salient"; domain words must never be listed here.

The other lists are each their own reader's, kept apart because their members differ from the two above
and merging them would change what those readers keep.
"""

from __future__ import annotations

ENGLISH: frozenset[str] = frozenset(
    """
    a about above after again against all almost along already also although always am among an and another
    any anyone anything are around as at be because been before being below between both but by can cannot
    could did do does doing done down during each either else enough etc even ever every few for from
    further get gets getting given go goes going got had has have having he her here hers him his how however
    i if in instead into is it its itself just keep keeps least less let lets like likely made make makes
    many may me might more most much must my need needs neither never no nor not now of off often on once
    one only onto or other others our ours out over own per rather same see seen several shall she should
    since so some something such than that the their theirs them then there these they this those though
    through thus to too under until up upon us use used uses using very via was way ways we well were what
    when where whether which while who whom whose why will with within without would yet you your yours
    e.g i.e eg ie vs etc new first second third two three next last also simply usually
    reads writes holds keeps loads returns runs takes makes gets sets calls opens starts stops works needs
    allows helps shows creates sends adds removes contains includes provides supports requires becomes
    stays remains happens fails means says gives finds seems small large big fast slow easy hard good bad
    open read write unset
    click select enter following optional custom example note procedure prerequisites verify step steps
    """.split()
)

CHINESE: frozenset[str] = frozenset(
    """
    的 了 是 在 有 和 与 及 或 而 就 都 也 还 又 被 把 让 给 对 从 到 向 以 于 为 这 那 其 之 等 个 些
    一个 一些 一种 这个 那个 这些 那些 这样 那样 这里 那里 这种 那种 什么 怎么 怎样 如何 哪些 哪个 哪里
    为什么 是否 可以 能否 能够 可能 需要 应该 请问 一下 吗 呢 吧 啊 我们 你们 他们 它们 我 你 他 她 它
    以及 或者 并且 而且 但是 因为 所以 如果 虽然 然后 之后 之前 时候 方式 部分 情况 东西 方面 过程 结果
    时间 地方 其他 其它 进行 通过 使用 没有 不是 就是 只是 已经 所有 每个 各自 不同 相同 同时 一起 以下 以上
    """.split()
)

FUNCTION_WORDS: frozenset[str] = frozenset(
    (
        "a an the of in on at for to and or with by from as is are was were be been being do does did what which who whom whose "
        "how why when where this that these those it its your my our their i me we you they can could should would will shall "
        "may might must have has had there here about into than then so if not no any all some me"
    ).split()
) | frozenset("的 了 吗 呢 是 在 和 与 及 如何 怎么 怎样 什么 哪些 哪个 哪里 为什么 需要 可以 多少 几个 几种 是否 能否 请问".split())
"""The agent's function words (`petrichor_serving.agent.words`): left out of the content words its plans
compare, in either language. Shorter than `ENGLISH | CHINESE`: common verbs and nouns ("use", "方式") stay
content words for the agent."""

ANAPHORS = frozenset(
    "it its itself they them their theirs this these those that he him his she her hers "
    "它 它们 它的 其 该 此 这 那 这个 那个 这些 那些 这种 那种 这里 那里 这儿 那儿 他 她 他们 她们 其中 上述".split()
)
"""Third-person pronouns and demonstratives: words that stand for something said before (a follow-up's)."""
ANAPHOR_SHOULD = "该"
"""The anaphor that is also the modal "should" (我该怎么配置): one only before a content word."""

GENERIC_ZH = frozenset({"问题", "内容", "方法", "东西", "情况", "部分", "方式", "过程", "结果"})
"""Chinese nouns too generic to be a term of the offline model on their own."""

FUNCTION_CHARS = "的是了在和与及有为被把由于将对从向之也都就而"
"""One-character Chinese function words: a transliterated name's outer parts stop at one (the answerer's
name spans)."""
