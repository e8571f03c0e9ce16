# ruff: noqa: RUF001  # the chapter's full-width punctuation, quoted as printed
"""The book's own words the notebooks put beside the code: chapter 34's TypeScript excerpts,
老z's drawings and the chapter's tables, exactly as printed (tests/test_chapter_module.py
checks them against the chapter's text byte for byte).

One place for these quotes: a notebook shows `book.CALLS` beside `mini_agent.session.calls`,
or `book.RESPONSIBILITY.beside("本包", [...])` with a column the package fills in live. (The
chapter's code in Python is `mini_agent`'s `session`, `context` and `agent`; this is its text.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .views import Table


@dataclass(frozen=True)
class Excerpt:
    """A piece of the chapter's code, one of 老z's drawings, or what 老z says, as printed."""

    title: str
    section: str  # the chapter's section it appears in
    source: str | None  # the TypeScript file it comes from; None: a drawing (老z 画的图)
    text: str
    spoken: bool = False  # 老z's words, where the chapter gives neither code nor a drawing

    @property
    def heading(self) -> str:
        """Whose words these are: the chapter's file, 老z's drawing or 老z's words (never a
        file name the chapter does not give)."""
        if self.spoken:
            return f"老z 的话：{self.title}"
        return f"本章 {self.source}：{self.title}" if self.source else f"老z 的图：{self.title}"

    def __repr__(self) -> str:
        return f"── {self.heading} ──\n{self.text}"


@dataclass(frozen=True)
class ChapterTable:
    """One of the chapter's tables: its header and rows, cell for cell."""

    section: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def lines(self) -> list[str]:
        """The table as the chapter's text holds it: one tab-separated line per row."""
        return ["\t".join(row) for row in (self.header, *self.rows)]

    def view(self) -> Table:
        return Table(self.header, self.rows)

    def beside(self, column: str, cells: Sequence[object]) -> Table:
        """The chapter's table with one more column on the right (say, what the package does)."""
        if len(cells) != len(self.rows):
            raise ValueError(f"{len(self.rows)} rows, but {len(cells)} cells for {column!r}")
        rows = [(*row, cell) for row, cell in zip(self.rows, cells, strict=True)]
        return Table((*self.header, column), rows)


# ── The chapter's code and diagrams, in the order the chapter prints them ──

PARSE_DISPATCH = Excerpt(
    "parseSessionMessage 的四个分支",
    "JSONL 的判别式读取",
    "src/session.ts",
    r"""if (item.role === "user") return { role: "user", content: item.content };
if (item.role === "assistant" && calls(item.toolCalls)) return { ... };
if (item.role === "tool" && typeof item.toolCallId === "string") return { ... };
return undefined;""",
)


CALLS = Excerpt(
    "calls()",
    "JSONL 的判别式读取",
    "src/session.ts",
    r"""// examples/mini-agent/src/session.ts，节选
function calls(value: unknown): value is ToolCall[] {
  return (
    Array.isArray(value) &&
    value.every((call) => {
      const item = record(call);
      return (
        item !== undefined &&
        typeof item.id === "string" &&
        typeof item.name === "string" &&
        "input" in item
      );
    })
  );
}""",
)


APPEND_SESSION = Excerpt(
    "appendSession()",
    "写入与恢复的正常路径",
    "src/session.ts",
    r"""export async function appendSession(path: string, message: Message): Promise<void> {
  await appendFile(path, `${JSON.stringify(message)}\n`, "utf8");
}""",
)


LOAD_SESSION_CHAIN = Excerpt(
    "loadSession 整条链路",
    "损坏记录的错误路径",
    None,
    r"""loadSession(path)
   │
   ├─ readFile 抛 ENOENT ─────────────► return []（首次启动，空会话）
   ├─ readFile 抛其他（权限、IO）──────► 原样向上抛（不吞）
   │
   ▼
   text.split("\n").filter(Boolean)
   │
   ▼
   逐行 map：
      │
      ├─ JSON.parse 抛错 ─────────────► throw `invalid session JSON at line N`
      ├─ parseSessionMessage 返回 undefined ─► throw `invalid session record at line N`
      └─ 合法 ────────────────────────► 返回 Message""",
)


CONTEXT_UNITS = Excerpt(
    "trimContext 的单元扫描",
    "上下文单元而不是消息切片",
    "src/context.ts",
    r"""// examples/mini-agent/src/context.ts，节选
const units: Message[][] = [];
for (let index = messages.length - 1; index >= 0;) {
  const message = messages[index];
  if (message.role === "tool") {
    // 向前找声明该 toolCallId 的 assistant
    let assistantIndex = -1;
    for (let i = index - 1; i >= 0; i--) {
      const candidate = messages[i];
      if (
        candidate.role === "assistant" &&
        candidate.toolCalls.some((call) => call.id === message.toolCallId)
      ) {
        assistantIndex = i;
        break;
      }
    }
    if (assistantIndex >= 0) {
      units.unshift(messages.slice(assistantIndex, index + 1));
      index = assistantIndex - 1;
      continue;
    }
  }
  units.unshift([message]);
  index--;
}""",
)


UNIT_SCAN_PICTURE = Excerpt(
    "反向扫描的过程",
    "单位构造的逐步过程",
    None,
    r"""历史： [user] [assistant{calls:a,b}] [tool a] [tool b]
                                          ↑index=3
反向扫到 tool b：向前找声明 id=b 的 assistant
   ─► 找到 index=1 的 assistant，slice(1, 4) 成一个 unit
        units = [ [assistant, tool a, tool b] ]，index 跳到 0
再扫到 user：没有关联，单条成 unit
        units = [ [user], [assistant, tool a, tool b] ]
翻转、从尾部（最新）开始装：先装 [assistant,tool a, tool b]，再装 [user]""",
)


ESTIMATE_WORDS = Excerpt(
    "estimateContextChars",
    "字符预算的正常和失败路径",
    None,
    "estimateContextChars() 对每条完整 Message 使用 JSON.stringify(message) 的字符长度，再加分隔开销。"
    "循环引用或不可序列化 message 会按索引报错；这是为了让预算失败可定位，并非 token 预算：中文、ASCII、"
    "Provider 隐藏开销与服务端序列化都不会精确反映。",
    spoken=True,
)


TRIM_ALGORITHM = Excerpt(
    "装预算的算法",
    "字符预算的正常和失败路径",
    None,
    r"""units（从新到旧）
   │
   ▼
kept = []
对每个 unit（从最新到最旧）：
   │
   ├─ estimateContextChars(unit ∪ kept) > maxChars？
   │     ├─ kept 为空 ──► throw "context budget cannot contain the smallest consistent message unit"
   │     └─ kept 非空 ──► break（不再往前装）
   └─ 未超限 ──► kept.unshift(...unit)，继续下一个 unit
   │
   ▼
kept 仍为空 ──► throw "context budget cannot be empty"
返回 kept""",
)


RUN_AGENT_FLOW = Excerpt(
    "一份状态进 runAgent 后走哪条路",
    "会话与上下文的责任边界",
    None,
    r"""runAgent(options)
   │
   ├─ options.sessionPath 存在？ ──► loadSession → messages（磁盘完整记录）
   │        不存在？            ──► messages = []（空会话开始）
   │
   ▼
   每轮 client.stream 前：
   │
   ├─ options.contextMaxChars 存在？ ──► trimContext(messages, maxChars) → 发给模型
   │        不存在？             ──► messages 原样发（不裁剪）
   │
   ▼
   每轮 record()：
       messages.push（内存态）
       sessionPath 存在时 appendSession（磁盘态）""",
)


# ── The chapter's tables ──

DISCRIMINATION = ChapterTable(
    "JSONL 的判别式读取",
    ("条件", "判定"),
    (
        ("不是对象，或 role 非 string，或 content 非 string", "直接 undefined（公共前提不满足）"),
        ('`role === "user"` 且前提满足', "合法，返回 user message"),
        ('`role === "assistant"` 且 `calls(toolCalls)`', "合法，返回 assistant message"),
        ('`role === "tool"` 且 toolCallId/isError 类型正确', "合法，返回 tool message"),
        ("其余（含 role 未知、分支字段缺失）", "undefined"),
    ),
)


CALL_CHECKS = ChapterTable(
    "JSONL 的判别式读取",
    ("校验选择", "为什么是它", "放弃了什么"),
    (
        (
            '`"input" in item`',
            "input 可为任意 JSON 含 null",
            '`typeof === "object"`（会误拒 null）',
        ),
        ('`typeof id/name === "string"`', "id、name 语义上必须是字符串", "松散的 truthy 判断"),
        ("每项先 `record()`", "元素是 unknown，需收窄", "直接索引（会崩）"),
        ("`value.every(...)`", "数组每一项都要过", "只查第一个（漏后面的坏项）"),
    ),
)


LINE_OUTCOMES = ChapterTable(
    "损坏记录的错误路径",
    ("行内容", "判别结果", "load 行为"),
    (
        ('`{"role":"user","content":"x"}`', "合法 user", "返回 message"),
        ("assistant 无 `toolCalls`", "不完整", "行号错误"),
        ("tool 无 `toolCallId`", "无法关联", "行号错误"),
        ("截断 JSON", "不能解析", "JSON 行号错误"),
    ),
)


TRIM_GRANULARITY = ChapterTable(
    "单位构造的逐步过程",
    ("裁剪粒度", "优点", "代价"),
    (
        ("逐条消息", "最大利用剩余预算", "可能留下“只有结果没有请求”的半截"),
        ("一致单元", "保证往返完整", "单元大时更早触顶、更早报错"),
        ("摘要/compaction", "保留语义还省预算", "需额外模型调用与失真策略，未实现"),
    ),
)


RESPONSIBILITY = ChapterTable(
    "会话与上下文的责任边界",
    ("状态", "保存位置", "失败语义", "当前未覆盖"),
    (
        ("完整事件", "JSONL", "坏行拒绝恢复", "加密、锁、删除"),
        ("本轮输入", "`trimContext` 返回值", "预算过小报错", "token 计数、摘要"),
        ("工具关联", "assistant/tool unit", "成组保留", "复杂并发关联"),
        ("长期偏好", "未实现", "不适用", "来源、过期、隐私"),
    ),
)


DESIGN_TRADEOFFS = ChapterTable(
    "设计代价与走查",
    ("设计取舍", "选择了什么", "放弃的替代"),
    (
        ("记录格式", "JSONL 追加", "单文件全量重写（每轮 O(n) 写放大）"),
        ("恢复策略", "坏行抛错", "坏行跳过（丢证据，静默错位）"),
        ("裁剪度量", "字符近似", "token 计数（需引入 tokenizer 依赖）"),
        ("上下文压缩", "裁剪/报错", "自动摘要（多一次模型调用）"),
        ("并发安全", "未加锁", "文件锁/fsync（复杂度与当前场景不匹配）"),
    ),
)


GUARANTEES = ChapterTable(
    "正常和失败序列",
    ("机制", "当前保证", "未保证"),
    (
        ("JSONL", "append 与判别验证", "加密、并发写锁"),
        ("trim", "确定字符上限", "token 精确性、语义保留"),
        ("tool unit", "调用/结果成组", "跨会话业务一致性"),
    ),
)


EXCERPTS = (
    PARSE_DISPATCH,
    CALLS,
    APPEND_SESSION,
    LOAD_SESSION_CHAIN,
    CONTEXT_UNITS,
    UNIT_SCAN_PICTURE,
    ESTIMATE_WORDS,
    TRIM_ALGORITHM,
    RUN_AGENT_FLOW,
)
TABLES = (
    DISCRIMINATION,
    CALL_CHECKS,
    LINE_OUTCOMES,
    TRIM_GRANULARITY,
    RESPONSIBILITY,
    DESIGN_TRADEOFFS,
    GUARANTEES,
)


@dataclass(frozen=True)
class ChapterTest:
    """A test the chapter names (or describes), and the pytest ids that check the same."""

    file: str  # agent.test.ts or context.test.ts
    chapter_says: str  # the chapter's words for it, quoted
    pytest_ids: tuple[str, ...]
    file_inferred: bool = False  # the chapter names no file for it: `file` is the kit's guess


_CASES = "tests/test_chapter_cases.py::"
CHAPTER_TESTS = (
    ChapterTest(
        "agent.test.ts",
        "rejects malformed session records",
        (
            *(
                f"{_CASES}test_rejects_malformed_session_records[{case}]"
                for case in ("bad role", "assistant without toolCalls", "tool without toolCallId")
            ),
            f"{_CASES}test_valid_user_record_round_trips",
        ),
    ),
    ChapterTest(
        "agent.test.ts",
        "keeps a multi-tool assistant unit with its results",
        (f"{_CASES}test_keeps_a_multi_tool_assistant_unit_with_its_results",),
    ),
    ChapterTest(  # 阶段验收: "现有测试通过 fake client 直接调用 runAgent", no file named
        "agent.test.ts",
        "可核验显式 sessionPath 的追加与恢复",
        (f"{_CASES}test_explicit_session_path_appends_and_restores",),
        file_inferred=True,
    ),
    ChapterTest(
        "context.test.ts",
        "trimContext(messages, 100) 触发最小单元报错",
        (f"{_CASES}test_budget_100_fails_for_a_larger_newest_unit",),
    ),
    ChapterTest(
        "context.test.ts",
        "独立的 context 测试核验字符估算和一致单元裁剪",
        (
            f"{_CASES}test_estimation_counts_json_characters_plus_separators",
            f"{_CASES}test_unit_trimming_keeps_newest_units_only",
        ),
    ),
)
