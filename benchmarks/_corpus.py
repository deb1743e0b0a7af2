"""A deterministic generated corpus of technical articles for build benchmarks: two knowledge bases
(`gen-zh`, `gen-en`) of runbook-style Markdown with front matter, nested headings, code fences, tables
and lists.

Each article is about one made-up component and reuses a handful of its own terms (environment
variables, commands, paths, concepts) across sections, as real documentation does, so extraction and
question generation find recurring names rather than word salad. Sizes follow a log-normal law around
5 KB (the bundled corpus averages 5.3 KB) with about 1 % of articles near 30 KB.

    write_corpus(root, articles=1000, seed=7)      # -> list of written paths
    change_articles(paths, fraction=0.01, seed=7)  # edits one section of 1 % of them in place
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

ZH_CONCEPTS = (
    "缓存 索引 副本 分片 快照 租户 队列 消息 事务 日志 节点 集群 网关 证书 配额 告警 指标 调度器 存储卷 连接池 "
    "主节点 从节点 检查点 压缩 限流 熔断 重试 超时 路由 负载均衡 服务发现 配置中心 权限 角色 令牌 审计日志 "
    "数据目录 备份 恢复 迁移 版本 清单 批处理 流水线 工作节点 心跳 租约 选主 一致性 水位线 回压 分区 偏移量 "
    "向量 召回 重排 引用 证据 摘要 目录 会话 凭据 密钥 加密 镜像 容器 探针 滚动升级 灰度发布 回滚 热点 冷数据"
).split()
EN_CONCEPTS = (
    "cache index replica shard snapshot tenant queue message transaction log node cluster gateway certificate "
    "quota alert metric scheduler volume connection pool leader follower checkpoint compaction rate limit "
    "circuit breaker retry policy timeout route load balancer service discovery role access token audit log "
    "data folder backup restore migration version manifest batch pipeline worker heartbeat lease election "
    "watermark backpressure partition offset embedding recall reranker citation evidence summary catalog "
    "session credential secret key encryption image container probe rolling upgrade canary release rollback "
    "hot key cold storage write-ahead log bloom filter consumer group dead-letter queue"
).split(" ")
COMPONENT_ROOTS = (
    "Nimbus Quill Harbor Lattice Beacon Cinder Drift Ember Fjord Glade Helix Indigo Juniper Kestrel Lumen "
    "Marlin Nova Onyx Pylon Quartz Rook Sable Tundra Umbra Vesper Willow Xenon Yarrow Zephyr Aurora Basalt"
).split()
COMPONENT_SUFFIXES = ("", "DB", "MQ", "Gate", "Store", "Proxy", "Sync", "Flow", "Watch", "Vault")
VERBS_EN = ("restart", "status", "rebuild", "compact", "drain", "sync", "rotate", "verify", "export", "import")
FLAGS = ("--force", "--dry-run", "--all", "--json", "--timeout 30", "--tenant acme", "--since 1h", "--verbose")
NUMBERS = ("3", "5", "8", "16", "30", "60", "128", "256", "1024", "4096")
UNITS_ZH = ("秒", "毫秒", "MB", "个连接", "次", "分钟")
UNITS_EN = ("seconds", "ms", "MB", "connections", "attempts", "minutes")

ZH_SECTIONS = ("概述", "安装", "配置", "工作原理", "运维操作", "监控与告警", "故障排查", "性能调优", "常见问题", "安全")
EN_SECTIONS = (
    "Overview",
    "Installation",
    "Configuration",
    "How it works",
    "Operations",
    "Monitoring",
    "Troubleshooting",
    "Tuning",
    "FAQ",
    "Security",
)
ZH_FOLDERS = ("概念", "运维", "参考", "指南")
EN_FOLDERS = ("concepts", "operations", "reference", "guides")

ZH_SENTENCES = (
    "{comp} 负责管理{c1}，并在{c2}发生变化时刷新{c3}。",
    "默认情况下，{env} 的值是 {num}{unit}，可以在配置文件 `{path}` 中修改。",
    "如果{c1}不可用，{comp} 会自动切换到{c2}，以避免{c3}丢失。",
    "使用 `{cmd}` 可以查看当前{c1}的状态。",
    "{c1}和{c2}之间的关系决定了{c3}的容量上限。",
    "为了减少{c1}的延迟，建议把{c2}部署在同一个可用区。",
    "{comp} 启动时会读取 `{path}`，然后依次加载{c1}和{c2}。",
    "每个{c1}都带有独立的{c2}，因此一个租户的{c3}不会影响其他租户。",
    "当{c1}超过 {num}{unit} 时，系统会触发{c2}告警并暂停{c3}。",
    "{c1}是{comp} 中最核心的概念，它记录了{c2}的完整历史。",
    "运维人员可以通过 {env} 环境变量关闭{c1}，但这会让{c2}退化为单点。",
    "升级之前请先执行 `{cmd}`，确认{c1}已经全部完成{c2}。",
    "{c1}的数据保存在 `{path}`，重启后由{c2}负责恢复。",
    "在高峰期，{c1}可能成为瓶颈，这时应该优先扩容{c2}而不是{c3}。",
    "{comp} 通过{c1}把请求分发给多个{c2}，并定期检查它们的{c3}。",
    "注意：修改{c1}之后必须重新生成{c2}，否则旧的{c3}仍然生效。",
)
EN_SENTENCES = (
    "{comp} manages the {c1} and refreshes the {c3} whenever the {c2} changes.",
    "By default {env} is {num} {unit}; change it in `{path}`.",
    "If the {c1} is unavailable, {comp} fails over to the {c2} so that no {c3} is lost.",
    "Run `{cmd}` to see the current state of every {c1}.",
    "The {c1} and the {c2} together decide how large the {c3} may grow.",
    "To keep {c1} latency low, place the {c2} in the same availability zone.",
    "On start-up {comp} reads `{path}` and then loads the {c1} and the {c2}.",
    "Each {c1} has its own {c2}, so one tenant's {c3} never affects another tenant.",
    "When the {c1} exceeds {num} {unit}, an alert fires and the {c3} is paused.",
    "The {c1} is the central concept of {comp}: it records the full history of the {c2}.",
    "Operators can switch the {c1} off with {env}, but the {c2} then becomes a single point of failure.",
    "Before upgrading, run `{cmd}` and check that every {c1} has finished its {c2}.",
    "The {c1} lives in `{path}`; after a restart the {c2} restores it.",
    "Under peak load the {c1} may become the bottleneck; scale out the {c2} before the {c3}.",
    "{comp} routes requests through the {c1} to several {c2} instances and checks their {c3} regularly.",
    "Note that changing the {c1} requires rebuilding the {c2}, otherwise the old {c3} stays in effect.",
)
ZH_STEPS = ("检查{c1}的状态", "备份{c1}", "执行 `{cmd}`", "确认 {env} 已设置", "观察{c2}指标", "重启 {comp}")
EN_STEPS = ("check the {c1} status", "back up the {c1}", "run `{cmd}`", "make sure {env} is set", "watch the {c2} metrics", "restart {comp}")
EDIT_ZH = "更新说明：自 {num} 版本起，{comp} 会在{c1}变化后自动重建{c2}。"
EDIT_EN = "Update: since release {num}, {comp} rebuilds the {c2} automatically after the {c1} changes."


@dataclass(frozen=True)
class Topic:
    """The vocabulary of one article: its component and the names it keeps coming back to."""

    lang: str
    component: str
    concepts: tuple[str, ...]
    envs: tuple[str, ...]
    commands: tuple[str, ...]
    paths: tuple[str, ...]


class ArticleWriter:
    """Writes one article at a time from a seeded generator; the same seed gives the same corpus."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def topic(self, lang: str) -> Topic:
        rng = self.rng
        root = rng.choice(COMPONENT_ROOTS)
        component = root + rng.choice(COMPONENT_SUFFIXES)
        prefix = component.upper()
        binary = f"{root.lower()}-ctl"
        concepts = tuple(rng.sample(ZH_CONCEPTS if lang == "zh" else EN_CONCEPTS, 8))
        keys = rng.sample(
            (
                "CACHE_SIZE",
                "DATA_DIR",
                "PORT",
                "TIMEOUT",
                "MAX_CONNECTIONS",
                "LOG_LEVEL",
                "REPLICAS",
                "BATCH_SIZE",
                "RETRY_LIMIT",
                "TLS_CERT",
                "QUOTA_MB",
                "SNAPSHOT_INTERVAL",
            ),
            4,
        )
        envs = tuple(f"{prefix}_{key}" for key in keys)
        commands = tuple(f"{binary} {verb} {rng.choice(FLAGS)}" for verb in rng.sample(VERBS_EN, 3))
        paths = (f"/etc/{root.lower()}/config.yaml", f"/var/lib/{root.lower()}/data", f"/api/v1/{root.lower()}/status")
        return Topic(lang, component, concepts, envs, commands, paths)

    def _fill(self, template: str, t: Topic) -> str:
        rng = self.rng
        c1, c2, c3 = rng.sample(t.concepts, 3)
        units = UNITS_ZH if t.lang == "zh" else UNITS_EN
        return template.format(
            comp=t.component,
            c1=c1,
            c2=c2,
            c3=c3,
            env=rng.choice(t.envs),
            cmd=rng.choice(t.commands),
            path=rng.choice(t.paths),
            num=rng.choice(NUMBERS),
            unit=rng.choice(units),
        )

    def _paragraph(self, t: Topic) -> str:
        pool = ZH_SENTENCES if t.lang == "zh" else EN_SENTENCES
        joiner = "" if t.lang == "zh" else " "
        return joiner.join(self._fill(self.rng.choice(pool), t) for _ in range(self.rng.randint(2, 6)))

    def _code(self, t: Topic) -> str:
        rng = self.rng
        if rng.random() < 0.5:
            lines = [f"export {env}={rng.choice(NUMBERS)}" for env in rng.sample(t.envs, 2)]
            lines += [f"{cmd}" for cmd in rng.sample(t.commands, 2)]
            return "```bash\n" + "\n".join(lines) + "\n```"
        lines = [f"{t.component.lower()}:"] + [f"  {env.split('_', 1)[1].lower()}: {rng.choice(NUMBERS)}" for env in t.envs]
        return "```yaml\n" + "\n".join(lines) + "\n```"

    def _table(self, t: Topic) -> str:
        rng = self.rng
        if t.lang == "zh":
            head = "| 参数 | 默认值 | 说明 |\n|---|---|---|"
            rows = [
                f"| `{env}` | {rng.choice(NUMBERS)} | 控制{rng.choice(t.concepts)}的{rng.choice(('上限', '间隔', '数量', '超时'))} |"
                for env in t.envs
            ]
        else:
            head = "| Setting | Default | Meaning |\n|---|---|---|"
            rows = [
                f"| `{env}` | {rng.choice(NUMBERS)} | limits the {rng.choice(t.concepts)} {rng.choice(('size', 'interval', 'count', 'timeout'))} |"
                for env in t.envs
            ]
        return head + "\n" + "\n".join(rows)

    def _steps(self, t: Topic) -> str:
        pool = ZH_STEPS if t.lang == "zh" else EN_STEPS
        steps = self.rng.sample(pool, self.rng.randint(3, len(pool)))
        return "\n".join(f"{i}. {self._fill(s, t)}" for i, s in enumerate(steps, start=1))

    def _block(self, t: Topic) -> str:
        kind = self.rng.random()
        if kind < 0.6:
            return self._paragraph(t)
        if kind < 0.75:
            return self._code(t)
        if kind < 0.88:
            return self._table(t)
        return self._steps(t)

    def article(self, lang: str) -> tuple[str, str]:
        """(title, Markdown with front matter) of one article."""
        rng = self.rng
        t = self.topic(lang)
        target = 30_000 if rng.random() < 0.01 else int(rng.lognormvariate(8.5, 0.45))
        sections = ZH_SECTIONS if lang == "zh" else EN_SECTIONS
        title = (
            f"{t.component} {rng.choice(('运维手册', '使用指南', '设计说明'))}"
            if lang == "zh"
            else f"{t.component} {rng.choice(('operations guide', 'user guide', 'design notes'))}"
        )
        parts = [f"# {title}", self._paragraph(t)]
        size = sum(len(p.encode()) for p in parts)
        order = list(sections)
        rng.shuffle(order)
        while size < target:
            heading = order.pop() if order else rng.choice(t.concepts)
            section = [f"## {heading}", self._paragraph(t)]
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.3:
                    section.append(f"### {rng.choice(t.concepts)}")
                section.append(self._block(t))
            parts.extend(section)
            size += sum(len(p.encode()) + 2 for p in section)
        front = f"---\ntitle: {title}\n---\n\n" if rng.random() < 0.5 else ""
        return title, front + "\n\n".join(parts) + "\n"

    def edit(self, markdown: str, lang: str) -> str:
        """The article with a one-sentence paragraph added at its end: a small real edit to its last section."""
        sentence = self._fill(EDIT_ZH if lang == "zh" else EDIT_EN, self.topic(lang))
        return f"{markdown.rstrip()}\n\n{sentence}\n"


KB_NAMES = {"zh": ("gen-zh", "生成的中文运维文档"), "en": ("gen-en", "Generated English runbooks")}


def write_corpus(root: Path, articles: int, seed: int = 7) -> list[Path]:
    """Write `articles` articles (alternating Chinese and English) under `root/gen-zh` and `root/gen-en`."""
    writer = ArticleWriter(seed)
    for kb, name in KB_NAMES.values():
        (root / kb).mkdir(parents=True, exist_ok=True)
        (root / kb / "_kb.yaml").write_text(f"name: {name}\ntenant: bench\n", encoding="utf-8")
    paths = []
    for i in range(articles):
        lang = "zh" if i % 2 == 0 else "en"
        folder = (ZH_FOLDERS if lang == "zh" else EN_FOLDERS)[(i // 2) % 4]
        path = root / KB_NAMES[lang][0] / folder / f"article-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(writer.article(lang)[1], encoding="utf-8")
        paths.append(path)
    return paths


def change_articles(paths: list[Path], fraction: float, seed: int = 7) -> list[Path]:
    """Edit a deterministic `fraction` of the articles in place (at least one); returns the edited paths."""
    rng = random.Random(seed + 1)
    count = max(1, round(len(paths) * fraction))
    chosen = sorted(rng.sample(paths, count))
    writer = ArticleWriter(seed + 2)
    for path in chosen:
        lang = "zh" if path.parent.parent.name == KB_NAMES["zh"][0] else "en"
        path.write_text(writer.edit(path.read_text(encoding="utf-8"), lang), encoding="utf-8")
    return chosen
