"""Synthetic memory cards and queries for the memory latency benchmark (seeded, reproducible).

A card is one statement an agent would remember: a decision, a configuration (service,
port, path, environment variable), an SQL query, an error and its fix, a preference, an
event with a date, a person, a ticket. About 30% are written in Chinese (with the same
kind of identifiers: paths, ports, ``JIRA-4821``). Names are combined from word lists and
numbers (services ``ledger-sync``, people ``Priya Novak`` / ``王晓明``, tickets
``PAY-4821``, error codes ``E4182``, hosts, tables, versions), so a query's keywords
select a handful of cards even among a million.

Metadata: ``user`` (one of 100), ``session`` (per user), ``type`` (the kind above) and
``date`` (ISO, the event date, over 2024-2025).

Card ``i`` of seed ``s`` depends on ``(s, i)`` only: :func:`card` rebuilds any card without
generating the ones before it, so :func:`queries` can aim at cards of a million-card
corpus without holding it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta

__all__ = [
    "TYPES",
    "USERS",
    "Card",
    "Query",
    "card",
    "cards",
    "queries",
]

USERS = 100
TYPES = ("decision", "config", "sql", "error", "preference", "event", "person", "ticket")
ZH_SHARE = 0.3
_START = date(2024, 1, 1)
_DAYS = 731  # 2024-01-01 .. 2025-12-31
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


@dataclass(frozen=True)
class Card:
    """One memory card: id, text and metadata (``user``, ``session``, ``type``, ``date``)."""

    id: str
    text: str
    user: str
    session: str
    type: str
    date: str
    lang: str
    query: str
    """A query a user could ask to find this card (its salient keywords, reworded)."""

    def metadata(self) -> dict[str, str]:
        return {"user": self.user, "session": self.session, "type": self.type,
                "date": self.date, "lang": self.lang}


@dataclass(frozen=True)
class Query:
    """A query aimed at one card, with optional metadata filters (``user``, ``type``, or a
    date window ``date_from`` / ``date_to``, inclusive, ISO)."""

    text: str
    target: str
    filters: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------ vocabulary

_W = str.split
_SVC_A = _W("billing ledger payments search catalog inventory auth session notify report "
            "export import media thumbnail pricing invoice refund fraud audit geo "
            "shipping checkout cart profile feed ranking metrics alerting backup "
            "scheduler")
_SVC_B = _W("api worker sync gateway indexer cron proxy service consumer writer "
            "reader cache")
_PRODUCTS = _W("Atlas Beacon Comet Delta Ember Falcon Granite Harbor Iris Juniper Kestrel "
               "Lumen Meridian Nimbus Onyx Pioneer Quartz Raven Summit Tundra Umbra Vertex "
               "Willow Xenon Yarrow Zephyr Aurora Basalt Cobalt Dune")
_PROJECTS = _W("JIRA PAY OPS INFRA DATA SEC MOB WEB PLAT ML CORE API QA BILL SUP")
_FIRST = _W("Priya Marco Elena Jonas Aisha Tomas Nadia Lucas Sofia Omar Hannah Diego Mei "
            "Viktor Amara Felix Ingrid Rafael Yuki Samir Clara Mateo Leila Oskar Zara "
            "Bruno Anika Tariq Freya Emil Noor Hugo Sana Caleb Ines Kenji Lara Pavel "
            "Rosa Theo")
_LAST = _W("Novak Patel Rossi Berg Okafor Silva Haddad Larsen Moreau Kowalski Tanaka "
           "Fischer Mendes Ivanova Brennan Costa Lindqvist Duarte Nakamura Weber Ahmed "
           "Schmidt Romero Varga Keller Sato Jensen Ortiz Horvat Quinn Dubois Meyer "
           "Rahman Ferreira Nilsen Popescu Yilmaz Kaur Murphy Suzuki")
_ZH_SURNAMES = list("王李张刘陈杨黄赵周吴徐孙马朱胡郭何林罗"
                    "高郑梁谢宋唐许韩冯邓曹彭曾肖田董潘袁蔡蒋")
_ZH_GIVEN = _W("晓明 子涵 浩然 欣怡 宇轩 雨桐 梓萱 俊杰 思远 嘉怡 一鸣 佳琪 志强 丽娜 建国 "
               "文博 若曦 天佑 海燕 明哲 晨曦 秀英 国栋 婉清 立新 雅琴 鹏飞 静怡 振华 书瑶")
_TECH = _W("PostgreSQL MySQL SQLite Redis Kafka RabbitMQ NATS Elasticsearch OpenSearch "
           "ClickHouse DuckDB MongoDB Cassandra etcd Consul Nginx Envoy Traefik gRPC GraphQL "
           "Celery Airflow Temporal Terraform Pulumi Kubernetes Nomad Docker Podman FastAPI")
_LIBS = _W("requests urllib3 pydantic sqlalchemy psycopg2 boto3 numpy pandas protobuf "
           "grpcio celery django flask uvicorn gunicorn aiohttp httpx redis-py kafka-python "
           "openssl libcurl tokio serde hyper reqwest")
_ERRORS = (
    ("ConnectionResetError", "连接被重置"), ("TimeoutError", "请求超时"),
    ("OOMKilled", "内存溢出被杀"), ("DeadlockDetected", "数据库死锁"),
    ("SSLCertVerificationError", "证书校验失败"), ("UnicodeDecodeError", "编码解析失败"),
    ("KeyError", "缺少字段"), ("IntegrityError", "唯一约束冲突"),
    ("PermissionDenied", "权限不足"), ("DiskFull", "磁盘已满"),
    ("SegmentationFault", "段错误"), ("RateLimitExceeded", "触发限流"),
    ("SchemaMismatch", "表结构不一致"), ("ClockSkew", "时钟偏移"),
    ("TooManyOpenFiles", "文件句柄耗尽"), ("DNSResolutionFailed", "域名解析失败"),
)
_FIXES = (
    ("raised the pool size to {n} connections", "把连接池调到 {n}"),
    ("pinned the library back to the previous release", "把依赖版本回退到上一个版本"),
    ("added an index on {col}", "给 {col} 加了索引"),
    ("set ulimit -n to {n}", "把 ulimit -n 调到 {n}"),
    ("rotated the certificate and restarted the pods", "更换证书并重启了 pod"),
    ("moved the job to the {region} cluster", "把任务迁到 {region} 集群"),
    ("increased the memory limit to {n}Mi", "把内存上限提高到 {n}Mi"),
    ("retried with exponential backoff capped at {n} ms", "加了指数退避重试，上限 {n} 毫秒"),
    ("enabled NTP on the host", "在主机上开启了 NTP 同步"),
    ("decoded the input as latin-1 first", "先按 latin-1 解码输入"),
)
_REGIONS = _W("eu-west-1 eu-central-1 us-east-1 us-west-2 ap-southeast-1 ap-northeast-1 "
              "cn-north-1 cn-east-2 sa-east-1 ca-central-1")
_TABLES = _W("orders invoices payments refunds users accounts sessions events shipments "
             "products prices carts reviews coupons tickets audits devices logins "
             "subscriptions transfers")
_COLUMNS = _W("created_at updated_at user_id account_id amount_cents status region country "
              "currency total_cents order_id device_id plan_id retries latency_ms")
_FILES = _W("config.yaml settings.toml app.env values.yaml docker-compose.yml "
            "nginx.conf pool.ini logging.json limits.conf secrets.env")
_ENV = _W("DATABASE_URL REDIS_URL KAFKA_BROKERS LOG_LEVEL MAX_WORKERS POOL_SIZE "
          "CACHE_TTL FEATURE_FLAGS S3_BUCKET SENTRY_DSN")
_PREFS = (
    ("tabs over spaces in {tech} configs", "{tech} 配置里用 tab 缩进"),
    ("short status updates in the morning standup", "早会只说简短进展"),
    ("pull requests under {n} lines", "PR 控制在 {n} 行以内"),
    ("dark mode dashboards in {product}", "{product} 的看板用深色模式"),
    ("async reviews over meetings", "异步评审，少开会"),
    ("metric units in reports", "报告里用公制单位"),
    ("{tech} over {tech2} for new services", "新服务优先用 {tech} 而不是 {tech2}"),
    ("answers in Chinese with English identifiers", "中文回答，标识符保留英文"),
    ("release notes grouped by {product} module", "按 {product} 模块整理发布说明"),
    ("on-call handover notes in the {ticket} thread", "值班交接写在 {ticket} 里"),
)
_ROLES = (("backend engineer", "后端工程师"), ("data engineer", "数据工程师"),
          ("SRE", "运维工程师"), ("product manager", "产品经理"),
          ("security lead", "安全负责人"), ("designer", "设计师"),
          ("QA lead", "测试负责人"), ("tech lead", "技术负责人"))
_STATUS = (("open", "待处理"), ("in progress", "处理中"), ("blocked", "阻塞"),
           ("in review", "评审中"), ("done", "已完成"))
_SUMMARIES = (("duplicate charges on retry", "重试时重复扣款"),
              ("slow export of large reports", "大报表导出很慢"),
              ("login loop on Safari", "Safari 上登录死循环"),
              ("missing invoices for {region}", "{region} 缺少发票"),
              ("flaky integration tests", "集成测试不稳定"),
              ("wrong currency rounding", "币种舍入错误"),
              ("memory leak in the {svc} worker", "{svc} 的 worker 内存泄漏"),
              ("stale cache after deploy", "发布后缓存没有刷新"))
_TOPICS = (("daily revenue per region", "各区域每日收入"),
           ("failed payments last week", "上周失败的支付"),
           ("top customers by spend", "消费最高的客户"),
           ("orders stuck in pending", "卡在待处理的订单"),
           ("devices without a login in 90 days", "90 天未登录的设备"),
           ("refund rate per plan", "各套餐的退款率"))


# --------------------------------------------------------------------- pieces


class _Pieces:
    """The random choices of one card, drawn from its own generator."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def pick(self, items: tuple[str, ...] | list[str]) -> str:
        return items[self.r.randrange(len(items))]

    def svc(self) -> str:
        return f"{self.pick(_SVC_A)}-{self.pick(_SVC_B)}"

    def person(self, zh: bool) -> str:
        if zh:
            return self.pick(_ZH_SURNAMES) + self.pick(_ZH_GIVEN)
        return f"{self.pick(_FIRST)} {self.pick(_LAST)}"

    def ticket(self) -> str:
        return f"{self.pick(_PROJECTS)}-{self.r.randrange(100, 10000)}"

    def product(self) -> str:
        return f"{self.pick(_PRODUCTS)} {self.r.randrange(1, 10)}.{self.r.randrange(0, 20)}"

    def version(self) -> str:
        return f"{self.r.randrange(0, 8)}.{self.r.randrange(0, 40)}.{self.r.randrange(0, 20)}"

    def path(self, svc: str) -> str:
        root = self.pick(("/etc", "/srv", "/opt", "/var/lib"))
        return f"{root}/{svc}/{self.pick(_FILES)}"

    def host(self, svc: str) -> str:
        return f"{svc}-{self.r.randrange(1, 40):02d}.{self.pick(_REGIONS)}.internal"

    def pair(self, items: tuple[tuple[str, str], ...], zh: bool) -> str:
        return items[self.r.randrange(len(items))][1 if zh else 0]


def _date_text(day: date, zh: bool) -> str:
    if zh:
        return f"{day.year}年{day.month}月{day.day}日"
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


# -------------------------------------------------------------- card templates
# each returns (text, query) for a language; ``day`` is the card's event date

_Template = Callable[[_Pieces, bool, date], tuple[str, str]]


def _decision(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    svc, old, new, ticket = p.svc(), p.pick(_TECH), p.pick(_TECH), p.ticket()
    who = p.person(zh)
    if zh:
        return (f"决定把 {svc} 从 {old} 迁移到 {new}（{ticket}），{who} 在"
                f" {_date_text(day, zh)} 拍板，旧集群保留两周。",
                f"{svc} 为什么迁移到 {new}")
    return (f"Decided to move {svc} from {old} to {new} ({ticket}); {who} signed off on"
            f" {_date_text(day, zh)} and the old cluster stays up for two weeks.",
            f"why did we move {svc} to {new}")


def _config(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    svc = p.svc()
    port, path, env = p.r.randrange(1024, 65536), p.path(svc), p.pick(_ENV)
    host = p.host(svc)
    value = p.r.randrange(2, 513)
    if zh:
        return (f"{svc} 现在监听 {port} 端口，配置在 {path}，{env}={value}，部署在 {host}。",
                f"{svc} 的端口和 {env} 配置")
    return (f"{svc} listens on port {port}; config lives in {path} with {env}={value},"
            f" deployed on {host}.",
            f"which port does {svc} listen on and where is its {env}")


def _sql(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    table, col, col2 = p.pick(_TABLES), p.pick(_COLUMNS), p.pick(_COLUMNS)
    topic = p.pair(_TOPICS, zh)
    limit, bound = p.r.randrange(5, 501), p.r.randrange(1, 100000)
    sql = (f"SELECT {col}, count(*) FROM {table} WHERE {col2} > {bound}"
           f" GROUP BY {col} ORDER BY 2 DESC LIMIT {limit};")
    if zh:
        return f"统计{topic}用的 SQL：{sql}", f"{topic} 的 SQL {table} {col2}"
    return f"Query for {topic}: {sql}", f"SQL for {topic} on {table} by {col2}"


def _error(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    svc, lib, version = p.svc(), p.pick(_LIBS), p.version()
    kind = _ERRORS[p.r.randrange(len(_ERRORS))]
    code = f"E{p.r.randrange(1000, 10000)}"
    fix = _FIXES[p.r.randrange(len(_FIXES))][1 if zh else 0].format(
        n=p.r.randrange(8, 4097), col=p.pick(_COLUMNS), region=p.pick(_REGIONS))
    if zh:
        return (f"{svc} 升级 {lib} 到 {version} 后报 {kind[0]}（{code}，{kind[1]}），"
                f"解决办法：{fix}。",
                f"{svc} 报 {kind[0]} {code} 怎么修")
    return (f"{svc} failed with {kind[0]} ({code}) after upgrading {lib} to {version};"
            f" fixed by: {fix}.",
            f"how did we fix {kind[0]} {code} in {svc}")


def _preference(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    who = p.person(zh)
    tech, tech2 = p.pick(_TECH), p.pick(_TECH)
    pref = _PREFS[p.r.randrange(len(_PREFS))][1 if zh else 0].format(
        tech=tech, tech2=tech2, n=p.r.randrange(100, 1001), product=p.product(),
        ticket=p.ticket())
    if zh:
        return f"{who} 的偏好：{pref}。", f"{who} 有什么偏好"
    return f"{who} prefers {pref}.", f"what does {who} prefer"


def _event(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    svc, region, ticket = p.svc(), p.pick(_REGIONS), p.ticket()
    minutes = p.r.randrange(3, 241)
    when = _date_text(day, zh)
    if zh:
        return (f"{when}，{region} 的 {svc} 宕机 {minutes} 分钟，复盘记录在 {ticket}。",
                f"{region} {svc} 宕机复盘")
    return (f"On {when}, {svc} in {region} was down for {minutes} minutes; the postmortem"
            f" is in {ticket}.",
            f"postmortem of the {svc} outage in {region}")


def _person(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    who, product = p.person(zh), p.product()
    role = p.pair(_ROLES, zh)
    handle = f"{p.pick(_FIRST).lower()}.{p.pick(_LAST).lower()}{p.r.randrange(1, 100)}"
    if zh:
        return (f"{who} 是 {product} 的{role}，邮箱 {handle}@example.com，周四不在。",
                f"{product} 的{role}是谁")
    return (f"{who} is the {role} for {product}; reach them at {handle}@example.com,"
            f" away on Thursdays.",
            f"who is the {role} for {product}")


def _ticket(p: _Pieces, zh: bool, day: date) -> tuple[str, str]:
    ticket, product, who = p.ticket(), p.product(), p.person(zh)
    summary = p.pair(_SUMMARIES, zh).format(region=p.pick(_REGIONS), svc=p.svc())
    status = p.pair(_STATUS, zh)
    if zh:
        return (f"{ticket}：{product} {summary}，负责人 {who}，状态{status}，"
                f"截止 {_date_text(day, zh)}。",
                f"{ticket} 的负责人和状态")
    return (f"{ticket}: {summary} in {product}, assigned to {who}, status {status},"
            f" due {_date_text(day, zh)}.",
            f"who owns {ticket} and what is its status")


_TEMPLATES: dict[str, _Template] = {
    "decision": _decision, "config": _config, "sql": _sql, "error": _error,
    "preference": _preference, "event": _event, "person": _person, "ticket": _ticket,
}


# ------------------------------------------------------------------ generators


def card(index: int, seed: int = 0) -> Card:
    """Card number ``index`` of the corpus of ``seed`` (the same on every call)."""
    rng = random.Random(seed * 1_000_000_007 + index)
    kind = TYPES[rng.randrange(len(TYPES))]
    zh = rng.random() < ZH_SHARE
    user_number = rng.randrange(USERS)
    user = f"user-{user_number:03d}"
    session = f"{user}/s{rng.randrange(1, 201):03d}"
    day = _START + timedelta(days=rng.randrange(_DAYS))
    text, query = _TEMPLATES[kind](_Pieces(rng), zh, day)
    return Card(f"card-{index:07d}", text, user, session, kind, day.isoformat(),
                "zh" if zh else "en", query)


def cards(n: int, seed: int = 0) -> Iterator[Card]:
    """Cards ``0 .. n-1`` of the corpus of ``seed``."""
    for index in range(n):
        yield card(index, seed)


FILTERED_SHARE = 0.3


def queries(n_cards: int, n: int = 200, seed: int = 0) -> list[Query]:
    """``n`` queries, each aimed at a card of the first ``n_cards`` cards of ``seed``
    (distinct targets when there are enough cards). About 30% carry filters: the target's
    user, its type, or a 60-day window around its date."""
    rng = random.Random(f"queries:{seed}:{n_cards}")
    if n_cards <= 0:
        return []
    targets = (rng.sample(range(n_cards), n) if n <= n_cards
               else [rng.randrange(n_cards) for _ in range(n)])
    out = []
    for index in targets:
        target = card(index, seed)
        filters: dict[str, str] = {}
        if rng.random() < FILTERED_SHARE:
            which = rng.randrange(3)
            if which == 0:
                filters = {"user": target.user}
            elif which == 1:
                filters = {"type": target.type}
            else:
                day = date.fromisoformat(target.date)
                start = day - timedelta(days=rng.randrange(0, 61))
                filters = {"date_from": start.isoformat(),
                           "date_to": (start + timedelta(days=60)).isoformat()}
        out.append(Query(target.query, target.id, filters))
    return out
