"""Every word the teaching apparatus shows, in one place: Simplified Chinese for notebooks.

Views, the scan trace, the steppers, the widgets and the exercise reports take their wording
from `words()`, never from a literal of their own. Code, identifiers, JSON and the chapter's
error phrases stay as they are. The CLI prints the same views in the same words; its own
lines (help, summaries, errors) are in `cli_text`.

`PASS` / `FAIL` stay as they are in exercise reports: the marks every test runner prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from mini_agent import listing
from mini_agent.context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG, estimate_context_chars
from mini_agent.listing import ListingWords, Messages
from mini_agent.visible import visible

PASS: Final = "PASS"
FAIL: Final = "FAIL"
"""What 07 prints as the cause of a record error: no decoding error lies beneath it."""


class Words(ListingWords):
    """The Chinese wording. Each method returns one string a reader sees."""

    def lines(self, count: int) -> str:
        return f"{count} 行"

    # --- SessionView / RunView / FileView ---------------------------------------------------
    column_index: str = "#"
    column_message: str = "消息"
    column_chars: str = "字符"
    column_on_disk: str = "磁盘上"

    def column_request(self, number: int) -> str:
        return f"请求 {number}"

    def column_request_short(self, number: int) -> str:
        return f"r{number}"

    run_legend: str = "● 这次请求发给了模型　○ 已在磁盘上、但被裁掉　空白：那时还没写入"

    def run_summary(self, count: int, chars: int, requests: int) -> str:
        return f"磁盘上 {self.messages_chars(count, chars)}；模型共收到 {requests} 次请求"

    def file_summary(self, name: str, lines: int, chars: int, newline_at_end: bool) -> str:
        parts = [self.lines(lines), self.chars(chars)]
        if not newline_at_end:
            parts.append("文件末尾没有换行")
        return (f"{name}：" if name else "") + "，".join(parts)

    # --- TrimView ----------------------------------------------------------------------------
    stopped_here: str = "丢弃：第一个装不下的，从这里停下"  # the unit `trim_context` breaks at
    too_big: str = "比预算还大"  # the newest unit, when the budget cannot hold it

    def older_dropped(self, count: int, chars: int) -> str:
        return f"… 更早的 {count} 个单元已丢弃，共 {chars} 字符"

    def older_unsent(self, count: int, chars: int) -> str:  # the budget error sent nothing
        return f"… 更早的 {count} 个单元也没有发出，共 {chars} 字符"

    def newer_kept(self, count: int, chars: int) -> str:
        return f"… 更新的 {count} 个单元已保留，共 {chars} 字符"

    def unit_note(self, number: int, chars: int, state: str = "") -> str:
        return " · ".join(filter(None, [self.unit(number), self.chars(chars), state]))

    # --- the scan (trace, ScanView, UnitScanStepper) ----------------------------------------
    history: str = "历史："

    def step(self, number: int) -> str:
        return f"第 {number} 步"

    def scan_alone(self) -> str:
        return "不是工具结果，自成一个单元"

    def scan_orphan(self, wanted: str) -> str:
        return f"往回找遍也没有 assistant 声明 id={visible(wanted)}，是孤立结果，自成一个单元"

    def scan_found(self, wanted: str, found: int, start: int, end: int) -> str:
        cut = f"slice({start}, {end}) 是一个单元"
        return f"往回找 id={visible(wanted)}，在 index={found} 找到 assistant，{cut}"

    def scan_step(self, number: int, explain: str, units: str, next_index: int) -> str:
        return f"{self.step(number)}：{explain}\n    units = {units}；index -> {next_index}"

    def scan_start(self, index: int) -> str:
        return f"开始：index={index}，units = []"

    def scan_done(self, count: int, newest_first: str) -> str:
        return f"完成：共 {count} 个单元；trim_context 从最新的单元往前装，顺序是 {newest_first}"

    units_heading: str = "units"

    # --- runs: the disk beside what was sent (one formatter for every printer) --------------
    before_run: str = "运行前"
    after_run: str = "运行后"

    def request_counts(self, number: int, disk: int, sent: int, budget: int) -> str:
        """`request_line` without the characters (06's exercise before it passes: the totals
        would be the answer)."""
        return (
            f"{self.request(number)}：磁盘上 {self.messages(disk)}；"
            f"发出 {self.messages(sent)}（{self.budget(budget)}）"
        )

    def frame_head(self, title: str, lines: int) -> str:
        return f"{title}：session.jsonl 有 {self.lines(lines)}"

    session_file: str = "session.jsonl（磁盘）"
    model_input: str = "模型收到的输入"
    no_request: str = "（这一刻没有请求）"

    # --- the session editor ------------------------------------------------------------------
    def bad_line(self, number: int, text: str) -> str:
        return f"  第 {number} 行：{text}"

    # --- widgets -----------------------------------------------------------------------------
    prev: str = "◀ 上一步"
    next: str = "下一步 ▶"
    play: str = "播放"
    step_slider: str = "步骤"
    moment_slider: str = "时刻"
    budget_slider: str = "预算 max_chars"  # the parameter's own name stays recognisable

    # --- exercise reports --------------------------------------------------------------------
    def report_summary(self, title: str, passed: int, cases: int) -> str:
        return f"{title}：{cases} 个用例，通过 {passed} 个"

    def should(self, kind: str, value: str) -> str:
        return f"应当{'抛出' if kind == 'error' else '返回'} {value}"

    def but(self, kind: str, value: str) -> str:
        return f"实际{'抛出了' if kind == 'error' else '返回了'} {value}"

    def should_but(self, expected: str, got: str) -> str:
        return f"{expected}，但{got}"

    any_exception: str = "应当抛出异常（哪种都行）"

    def should_raise_starting(self, phrase: str, meaning: str | None = None) -> str:
        return f"应当抛出以 '{phrase}' 开头的错误" + (f"（释义：{meaning}）" if meaning else "")

    def should_raise_message(self, message: str, meaning: str | None = None) -> str:
        return f"应当抛出消息为 '{message}' 的错误" + (f"（释义：{meaning}）" if meaning else "")

    # --- 01 练习: parse_session_message -----------------------------------------------------
    leaning_on_constructors: str = (
        "这一行是本包的构造函数替你拦下的：它抛出 TypeError，你的 try/except 把它变成了 None。"
        "检查时用的是不查类型的构造函数（像本章 TypeScript 的对象字面量），于是你的函数返回了一条"
        "坏消息：照本章，每一项检查要你自己写在判别里"
    )
    input_may_be_null: str = (
        'input 可以是任意 JSON，包括 null、数字：本章查的是 "input" in item（键在就行），不看它的值；'
        '写 .get("input") is not None、真假判断或 isinstance(..., dict)，就把合法的 input 拒之门外'
    )
    called_the_answer: str = (
        "你的函数调用了练习要你自己写的那个函数（本包的，名字见上）："
        "练习要你自己把它写出来，检查时这个调用会直接报错"
    )

    def called_and_swallowed(self, names: str) -> str:
        return (
            f"你的函数调用了练习要你自己写的那个函数（{names}）：检查时这个调用会报错 CalledTheAnswer，"
            "而你自己的 except 把它接住了，所以上面的 FAIL 里看不到它。练习要你自己把它写出来"
        )

    def same_as_above(self, reason: str) -> str:
        """What a report shows for a reason it has already shown in full: its opening words."""
        opening = re.split("[：，；。（]", reason, maxsplit=1)[0]
        return f"同上（{opening[:40]}……）"

    def crashed_again(self, count: int, error: str) -> str:
        """The one line for the other `count` cases whose answer raised the same `error`."""
        return f"另外 {count} 个用例同上：也都抛出了 {error}，不再逐条列出；先把这个错误修好"

    def called_again(self, count: int) -> str:
        """The one line for the other `count` cases that called the answer too."""
        return f"另外 {count} 个用例同上：也都调用了练习要你写的那个函数，不再逐条列出"

    empty_string_falsy: str = (
        '空字符串 "" 也是字符串，这条消息合法：你用了真假判断（if x: 或 .get(...) 的真假），'
        '而 "" 在 Python 里是假值。本章查的是类型（typeof x === "string"），写 isinstance(x, str)'
    )

    calls_not_array: str = (
        'toolCalls 不是数组，你的函数却造出了一条 assistant：空对象 {} 和空字符串 "" 在 Python 里'
        "也能拿来 for 循环（一次也不走），于是成了“没有调用”。本章的 calls() 是 "
        "Array.isArray(value) && value.every(...)：先确认是数组，再查每一项；Python 里先写 "
        "isinstance(value, list)，能迭代不等于是数组"
    )
    content_in_one_branch: str = (
        "content 不是字符串，这条消息却过了关：content 是三个分支的公共前提（对象、role 是 string、"
        "content 是 string），本章的判别顺序是先查公共前提、再按 role 分派；把它挪进某个分支（比如只在 "
        "user 分支里查），别的分支就不再查它（01 的“最容易走错的第一处”）"
    )
    message_as_dict: str = (
        '返回的是 dict：本章的对象字面量 { role: "user", content } 在本包里是一个消息对象——'
        "UserMessage(content)、AssistantMessage(content, tool_calls)、"
        "ToolMessage(tool_call_id, content, is_error)，每个调用是 ToolCall(id, name, input)"
        "（ToolCall.from_record(call) 从 dict 造一个）"
    )
    is_error_int: str = (
        "isError 放过了整数：只查键在不在、写 isinstance(x, int)、写 x in (True, False)，都让 0、1 "
        "过了关（Python 的 bool 是 int 的子类，0 == False、1 == True）；查布尔值要写 "
        'isinstance(x, bool)（本章的 typeof item.isError === "boolean"）'
    )
    calls_every: str = (
        "你只查了第一项：后面那一项单独交给你的函数时被拒绝了，跟在合格的第一项后面却过了关。"
        "本章的 calls() 是 value.every(...)：数组的每一项都要过检查（Python 里写 all(...)），"
        "本章的表里放弃的正是“只查第一个（漏后面的坏项）”"
    )
    unchecked_field: str = (
        "你的函数返回了一条字段类型不对的消息：检查时构造函数不查类型（像本章 TypeScript 的对象字面量），"
        "判别里少了哪一项检查，坏数据就原样进了消息"
    )

    # --- 03 练习: load_session ---------------------------------------------------------------
    lone_carriage_return: str = (
        "Path.read_text（和文本模式的 open）默认把单独的 \\r 换成 \\n，splitlines() 也在 \\r 处断行；"
        '本章的 readFile 原样读出文本，split("\\n") 只在 \\n 处断，这一行里的两条记录连在一起，不是 JSON。'
        '用 Path(path).read_bytes().decode("utf-8") 读'
    )
    spaces_not_blank: str = (
        '只有空格的一行不是空行：本章的 filter(Boolean) 只去掉空字符串 ""，一串空格不是空字符串，'
        "是真值，留了下来；JSON.parse 读一串空格会抛错（只有空白不是 JSON 文本，json.loads 也一样），"
        "所以它是一行坏行：要报错，不能跳过（判断空行别先 strip()）"
    )
    line_numbers_from_one: str = (
        "行号比应当的少 1：行从 1 数起，和编辑器左边显示的一样；"
        "enumerate 默认从 0 数，写 enumerate(..., start=1)"
    )
    phrases_swapped: str = (
        "两层错误用了对方的短语：JSON.parse 解析不了的行是 invalid session JSON at line N，"
        "JSON 合法、判别却不过的行才是 invalid session record at line N"
    )
    blank_line_not_skipped: str = (
        '你的函数把一个空行当成了坏 JSON：本章的 split("\\n").filter(Boolean) 会扔掉空行；'
        'Python 的 split("\\n") 也会在文件末尾的 \\n 之后留下一个空字符串 ""，'
        "所以要写 if not line: continue"
    )
    unknown_role_taken: str = (
        "未知的 role 被你收成了一条消息：本章“没有兜底”——三个分支都不命中，就落到最后的 "
        "return undefined（Python 里 return None），不能有一个把其他 role 当成 user 的默认分支"
    )
    parser_never_raises: str = (
        "parse_session_message 只判别，从不抛错：判不出消息就返回 None（本章返回 undefined）。"
        "抛错、带上行号，是 load_session 的事——本章把“这行是什么”和“这行坏了怎么办”分开"
    )
    none_in_messages: str = (
        "返回的列表里有 None：parse_session_message 判不出消息时返回 None，这时要抛错——"
        "本章是“loadSession 的 map 里，它拿到 undefined 才抛 invalid session record at line N”，"
        "不能把 None 放进消息列表"
    )
    load_reads_nan: str = (
        '另外：你的 load_session 读进了带 NaN 的一行（{"n":NaN}）。json.loads 默认接受 NaN、'
        "Infinity，本章的 JSON.parse 不接受，会报 invalid session JSON；本包照本章拒绝。"
        "要一样，写 json.loads(line, parse_constant=...) 让它抛错。这一处不计较"
    )
    from_zero_by_chance: str = (
        "这一条是碰巧对上的：你的行号从 0 数（见上面几条），这里坏行前面正好有一个空行，"
        "物理行号少 1 恰好等于照本章数非空行得到的行号。改成从 1 数之后，这一条照样通过"
    )
    line_zero: str = (
        "没有第 0 行：行从 1 数起，和编辑器左边显示的一样，文件的第一行是第 1 行；"
        "enumerate 默认从 0 数，写 enumerate(..., start=1)"
    )
    phrase_rule: str = "错误消息要用本章的英文原话，一字不差："
    chapter_phrase: str = (
        phrase_rule + "不是 JSON 的行是 invalid session JSON at line N，"
        "判别不通过的行是 invalid session record at line N（N 是行号）。以原话开头就行，后面可以再加细节，"
        "本包就在冒号后面补了一句英文；读者看到的中文释义是笔记本另加的，不在错误消息里"
    )
    trim_chapter_phrase: str = (
        phrase_rule + f"最新的单元就装不下时是 {SMALLEST_UNIT_TOO_BIG}，一个单元也没装下时是 "
        f"{EMPTY_CONTEXT}。读者看到的中文释义是笔记本另加的，不在错误消息里"
    )
    budget_equal_fits: str = (
        "预算恰好等于要发的字符数时，它们装得下：本章的判断是 estimateContextChars([...unit, ...kept]) "
        "> maxChars 才算装不下，刚好等于不算超；写 > max_chars，别写 >="
    )
    split_at_u2028: str = (
        "这一行被切成了两半：str.splitlines() 不只在 \\n 处断行，也在 \\r、U+2028、U+2029、\\x85、"
        "\\x0b、\\x0c 这些“行分隔符”处断行，而 JSON 字符串里可以原样写着 U+2028。"
        '本章是 text.split("\\n")，只在 \\n 处断：Python 里也写 text.split("\\n")'
    )
    only_missing_file_is_empty: str = (
        "只有“文件不存在”才是空会话：本章只把 ENOENT（Python 里是 FileNotFoundError）当成 []，"
        "“其他错误原样向上抛，不吞”。写 except FileNotFoundError:，别写 except OSError:——"
        "路径是目录、没有权限这些错误要照常抛出"
    )
    bad_line_skipped: str = (
        "坏行被跳过了：本章从不跳过坏行，遇到一行不是 JSON 或判别不通过，就抛出带着行号的错误"
        "（invalid session JSON at line N / invalid session record at line N）；只有空行才跳过"
    )
    no_separator: str = (
        "你没有加分隔开销：本章说“再加分隔开销”，本包每条消息加 1（JSONL 每行末尾的换行）"
    )
    should_throw: str = (
        "这里应当报错，而不是返回：第一个（最新的）单元就装不下，kept 为空时本章 throw——"
        "“宁可失败，不装傻”；装了一些之后才装不下，才是停下（break）"
    )
    should_throw_empty: str = "一个单元也没装下（比如历史是空的）时，本章也 throw：发一个空的上下文等于让模型答一个没有前文的问题"
    one_numbering: str = "两种坏行的行号用同一种数法：都数物理行，或者都照本章数非空行"
    mixed_numbering: str = (
        "不是 JSON 的行和判别不通过的行，你用了两种数法（一种数物理行，一种数非空行）："
        "同一个文件报出的“第 N 行”要能按同一种数法找到，两种错误应当一样数"
    )

    # --- 06: choose context_max_chars ---------------------------------------------------------
    def keeps_question(self, number: int) -> str:
        return f"{self.request(number)}仍然带着用户的提问（#0 user）"

    budget_not_positive: str = "预算应当是正整数（int，至少 1）"

    def budget_refused(self, given: str) -> str:
        return f"{self.budget_not_positive}，你传的是 {given}：没有运行"

    def not_a_function(self, given: str) -> str:
        return f"你传的不是函数：{given}，要传函数本身，不加引号、不加括号"

    def wrong_parameters(self, call: str, count: int, theirs: str) -> str:
        return f"练习的函数要接受 {count} 个参数，检查时这样调用它：{call}；你的函数是 {theirs}"

    def run_refused(self, error: str) -> str:
        return f"run_agent 没有跑完：裁剪时抛出了 {error}"

    question_dropped: str = (
        "用户的提问被裁掉了：预算装不下这次请求时内存里的全部消息"
        "（通过之后再列出每次请求的字符数；现在先用上面每条消息的字符数自己算一算）"
    )
    budget_forgot_separator: str = (
        "差得不多：估算是每条消息 JSON 的长度，再加每条一个分隔符（+1）；上面右列的字符数已经含着它，"
        "把第 3 次请求前内存里那几条的右列加起来，再和你的预算比一比"
    )
    smallest_budget: str = "这是做得到这一点的最小预算"

    def sent_span(self, first: int, end: int) -> str:
        kept = "，带着提问" if first == 0 else "，提问被裁掉" if end else ""
        return f"：发出 #{first} 到 #{end - 1}{kept}" if end else ""

    def budget_vs_least(self, budget: int, least: int) -> str:
        if budget == least:
            return ""
        if budget > least:
            return (
                "还有更小的预算也做得到：最小的预算正好装下第 3 次请求之前内存里的全部消息，"
                "把那几条消息右边一列的字符数加起来（右列已经含着每条的分隔符 +1，不用再加）"
            )
        return (
            "这个预算装不下提问连同它后面的全部消息：第 3 次请求要带着提问，就得带上内存里的每一条"
        )

    # --- 07: record() ------------------------------------------------------------------------
    record_case_with_path: str = "有 session_path：每条消息既进内存，也追加到磁盘"
    record_case_restart: str = "重启续上：从磁盘读回之后接着记录"
    record_case_without_path: str = "没有 session_path：只记在内存里"
    record_case_falsy_path: str = (
        "session_path 是个假值，却是真的会话文件（新会话时 len() 为 0）：照样写盘"
    )
    record_case_falsy_chapter: str = (
        "session_path 是个假值的会话文件：你照本章按真假判断，没有写盘，也算对（见上面的说明）"
    )
    record_truthy_path: str = (
        "你写的 if session_path: 和本章的 if (options.sessionPath) 一样按真假判断，所以最后那个用例"
        "照本章判为通过。但要知道它的代价：一个路径对象可以定义 __len__ 或 __bool__，是假值却真能写，"
        "检查器给的就是这样一个路径，你的 record 没有往里写。本包因此写 if session_path is not None:"
        '，问的是“有没有给路径”（PEP 8 也建议和 None 比较用 is / is not）；空字符串 "" 本包直接拒绝'
    )
    record_case_failure: str = "写盘失败时把错误抛出去，内存也不多出这条消息"

    def record_twice(self, where: str) -> str:
        return f"{where}多了一份这条消息：一次 record 只记一次，是不是 append（或 append_session）调用了两遍？"

    def record_other_error(self, disk_error: str, raised: str) -> str:
        return (
            f"写盘失败时应当把操作系统的错误（这里是 {disk_error}）抛出去，但实际抛出的是 {raised}："
            "这是 record 自己出的错，不是磁盘拒绝了写入"
        )

    record_swallowed: str = "写盘失败了，record 却正常返回：磁盘和内存从此不一致，而且没人知道"
    record_list_unchanged: str = (
        "传进来的列表一条也没多：record 要把消息放进调用者的那个 messages（messages.append(message)，"
        "就是本章的 messages.push；写成 messages = messages + [message] 只换了函数里的局部变量）"
    )
    record_list_only_with_path: str = (
        "没有 session_path 时，传进来的列表一条也没多（有 session_path 时却对了）：进内存这一步不该看"
        "有没有 session_path，只有写磁盘才看它（本章图里的“sessionPath 存在时 appendSession”）"
    )
    record_memory_ahead: str = (
        "写盘失败了，消息却已经进了内存：内存比磁盘多一条，下一次请求发出的就不是磁盘上的记录"
        "（先写磁盘、成功后再进内存，就不会这样）"
    )

    # --- 04 练习: the units ----------------------------------------------------------------
    def units_not_lists(self, outer: bool, inner: bool) -> str:
        where = "外层和每个单元都" if outer and inner else "外层" if outer else "单元"
        later = "；05 里还要写 unit + kept，tuple 和 list 不能相加" if inner else ""
        return (
            f"消息和分组都对了，但{where}是 tuple，应当是 list：本章的 Message[][] 是数组的数组，"
            f"本包返回 list 套 list{later}"
        )

    units_reversed: str = (
        "单元都对，但顺序反了：你返回的是从新到旧。本章从尾部往回扫，每找到一个单元就 "
        "units.unshift(...) 插到最前面，所以结果从旧到新；Python 里写 units.insert(0, unit)，"
        "或者 append 完再 units.reverse()"
    )

    units_earliest_declarer: str = (
        "同一个 call id 被声明了两次，你的结果连到了最早的那个 assistant：往回找声明者要从 "
        "index - 1 往前找（本章的 for (let i = index - 1; i >= 0; i--)），找到的第一个就停（break）；"
        "从 0 往后找，找到的是最早的那个，单元会把中间的消息全吞进去"
    )

    units_adjacent_only: str = (
        "你只看了紧挨着的前一条：结果前面那条不一定是声明它的 assistant，中间可能隔着别的消息。"
        "本章用内层循环从 index - 1 一直往前找声明这个 toolCallId 的 assistant"
        "（for (let i = index - 1; i >= 0; i--)）；找到之后，"
        "夹在中间的消息也整段划进单元（slice(assistantIndex, index + 1)）"
    )

    units_never_grouped: str = (
        "tool 结果一条也没有和它的 assistant 成组，每条消息都自成一个单元：message 是 tool 时，"
        "要用本章的内层循环往前找声明这个 toolCallId 的 assistant，找到了就把 "
        "messages[下标 : index + 1] 整段作为一个单元，再让 index 跳到下标 - 1"
    )

    units_off_by_one: str = (
        "下标 0 上的 assistant 没有和它的结果成组：本章写的是 assistantIndex >= 0——找不到时是 -1，"
        "0 是合法的下标（历史的第一条）；写成 > 0，第一条消息上的 assistant 就被当成了找不到"
        "（本章说的“最容易走错的第二处”，04 的“>= 0”一节）"
    )

    units_slice_end: str = (
        "有个单元少了最后一条，正是扫描遇到的那条 tool 结果：Python 的切片 messages[j:i] 不含 i。"
        "本章写的是 messages.slice(assistantIndex, index + 1)，Python 里是 messages[j:i + 1]"
    )

    units_overlap: str = (
        "同一条消息出现在好几个单元里：成组之后，扫描要跳到这个 assistant 之前——本章写 "
        "index = assistantIndex - 1，不是 index -= 1；否则往回走时又会把 assistant 和它后面的"
        "消息再分一次组"
    )
    units_wrong_declarer: str = (
        "有个单元把一条结果归给了没有声明它的 assistant：往前找声明者时要比对 id——本章写 "
        "calls.some((call) => call.id === message.toolCallId)，不是遇到第一个 assistant 就停；"
        "找不到声明者的孤立结果自己成一个单元"
    )

    units_two_messages: str = (
        "有个单元只拿了 assistant 和这条结果两条，夹在它们中间的消息（别的结果，或者一条 user）丢了：本章切的是"
        "从 assistant 到当前 tool 的整段 slice，“成组的是一整趟往返，不是刚好两条消息”"
    )

    # --- 05 练习二: the kept messages --------------------------------------------------------
    kept_nested: str = (
        "返回的列表里混进了列表：kept.insert(0, unit) 把整个单元当成一条插到前面。本章写的是 "
        "kept.unshift(...unit)，三个点把单元展开成一条条消息；Python 里写 kept = unit + kept"
    )

    kept_too_much: str = (
        "保留的比本章多：每装一个单元，要量的是 unit 连同已经装下的 kept（本章的 "
        "estimateContextChars(unit ∪ kept) > maxChars），不是只量这个单元自己；只量单元，"  # noqa: RUF001
        "每个都装得下，加起来就超了预算"
    )

    def kept_too_little(self, chars: int, extra: int | None) -> str:
        if extra is None:
            measured = "你的函数丢掉了本章装得下的单元"
        else:
            measured = (
                f"字符多量了 {extra} 个：两条 user 消息（“问题”“回答”），本章量作 {chars} 个字符，"
                f"你的函数要预算 {chars + extra} 才两条都装下"
            )
        return (
            f"保留的比本章少——{measured}。本章量的是 estimateContextChars([...unit, ...kept])："
            "每条消息 JSON.stringify 的长度，再加每条 1 个换行，就是 estimate_context_chars(unit + "
            "kept)，换行已经算在里面，别再加一次；json.dumps 默认在逗号和冒号后加空格、把中文写成 "
            "\\uXXXX，都会多量。比较用 > max_chars 才算装不下"
        )

    estimate_checklist: str = (
        "没有哪一种单一的写法能解释这些数，可能同时错了几处。逐项对一对：① 量的是每条消息写进文件的"
        '那一行（to_record(m) 交给 json.dumps），不是 str(m)；② json.dumps 要写 separators=(",", '
        '":") 和 ensure_ascii=False；③ 长度用 len，不是编码后的字节数；④ 分隔开销选本章的一种读法，'
        "比如每条 1 个"
    )
    kept_split_unit: str = (
        "你把一致单元拆开了：留下的消息里有半个单元（比如结果留下了，声明它的 assistant 没留下）。"
        "要按 context_units 切出的单元整个装、整个丢，不是一条条消息地装——本章的裁剪粒度表里，"
        "“逐条消息”正是被放弃的那一行：会留下没有请求的结果"
    )

    empty_is_not_too_small: str = (
        "历史是空的：一个单元也没有，谈不上“最新的单元装不下”。本章在循环之后再查一次 "
        "kept.length === 0，抛的是 context budget cannot be empty；kept 为空时的 throw 写在循环里、"
        "碰到第一个装不下的单元时才抛"
    )

    kept_skipping: str = (
        "跳过了装不下的单元，又去装更早、更小的：本章遇到第一个装不下的单元就停（kept 非空时 break，"
        "“不再往前装”），发出去的是历史最新的连续一段，中间不能有缺口"
    )

    kept_out_of_order: str = (
        "保留的消息都对，但先后顺序不对：发给模型的消息要保持历史里的顺序。本章每装下一个更早的"
        "单元就 kept.unshift(...unit)，把它放到前面；Python 里写 kept = unit + kept"
    )

    # --- show_source --------------------------------------------------------------------------
    folded_twin: str = "点开看 Python：先自己做本节后面的练习，做完再来对照"

    # --- 02 练习: the on-disk line ------------------------------------------------------------
    line_newline: str = "末尾多了换行：这一行不含 \\n，append_session 写盘时才加上它"
    line_spaces: str = '多了空格：json.dumps 默认在逗号和冒号后面加空格，JSON.stringify 不加；写 separators=(",", ":")'
    line_nan: str = (
        "json.dumps 默认把 NaN 原样写成 NaN，它不是 JSON（读回时 JSON.parse 就报错）："
        "写 allow_nan=False 让它报错，或者照本章写成 null"
    )
    line_snake_case: str = "磁盘上的键是本章的驼峰写法（toolCalls、toolCallId、isError）：snake_case 的名字只在 Python 的内存里用"
    line_empty_calls: str = '没有调用时也要写 "toolCalls":[]：本章的判别要 assistant 总带着 toolCalls 数组，少了它，loadSession 读回时就是坏记录'

    def line_missing(self, keys: Sequence[str]) -> str:
        return f"少了键 {'、'.join(keys)}：本章的每种记录都带着它的全部字段"

    line_ascii: str = (
        "中文或 emoji 被写成了 \\uXXXX：json.dumps 默认 ensure_ascii=True，JSON.stringify 原样写出；"
        "写 ensure_ascii=False"
    )

    line_floats: str = (
        "工具输入里的小数，你照 json.dumps 写成了 1.0 和 1e-07，JSON.stringify 写的是 1 和 1e-7："
        "JavaScript 的数不分整数和小数，1.0 就是 1。这是 Python 和 JavaScript 写数字的差别，本章的 "
        "TypeScript 碰不到它，这一处不计较；本包怎样逐字节照 JSON.stringify 写数字，"
        "见附录 07a_beyond_the_chapter.ipynb#json-stringify"
    )

    def only_key_order(self, theirs: Sequence[str], ours: Sequence[str]) -> str:
        return (
            f"内容相同，键的顺序不同：你写的是 {'、'.join(theirs)}，本包写的是 {'、'.join(ours)}。"
            "本章省略了消息的字面量（return { ... }），键的顺序是本包的推断（role、content，然后是"
            "这个 role 自己的字段；调用里是 id、name、input）；练习要的是和本包写出的会话文件一字不差的一行"
        )

    # --- 05 练习一: what the estimate counts ----------------------------------------------
    estimate_title: str = "estimate_context_chars（字符按码点数或按 UTF-16 码元数，都算对）"

    def counted_code_points(self, got: int, kit: int) -> str:
        return (
            f"你数的是 Python 的字符（码点，len(str)），😀 算 1 个，得到 {got}；本章 TypeScript 的 .length "
            f"和本包数的是 UTF-16 码元，😀 算 2 个，同样的分隔开销下得到 {kit}。两种都算对，也都不是 token"
        )

    def separator_choices(self, lines: int, readings: dict[int, str]) -> str:
        choices = [f"{lines + overhead}（{names}）" for overhead, names in readings.items()]
        return (
            f"应当返回各条 JSON 的长度之和 {lines}，再加本章的一种分隔开销："
            f"{'、'.join(choices[:-1])}或 {choices[-1]}"
        )

    def error_with_index(self, where: str) -> str:
        return (
            f"应当抛出一个带着 {where} 的错误（索引从 0 数起）：本章说“循环引用或不可序列化"
            " message 会按索引报错”"
        )

    estimate_forms: tuple[tuple[str, str], ...] = (
        ("spaces", "json.dumps 默认在冒号和逗号后面各加一个空格，JSON.stringify 不加：写成 "
         'json.dumps(记录, separators=(",", ":"), ensure_ascii=False)'),
        ("ascii", "json.dumps 默认把中文和 emoji 写成 \\uXXXX 转义（一个汉字 6 个字符），"
         "JSON.stringify 照原样写：加上 ensure_ascii=False"),
        ("both", "json.dumps 的两个默认都和 JSON.stringify 不同：冒号和逗号后面的空格、中文和 emoji 的 "
         '\\uXXXX 转义；写成 json.dumps(记录, separators=(",", ":"), ensure_ascii=False)'),
        ("bytes", "你数的是 UTF-8 字节（一个汉字 3 个字节、一个 emoji 4 个）：本章数的是字符串的 "
         ".length，Python 里是 len(字符串)，不用先 encode"),
    )  # fmt: skip

    def two_per_message(self, got: int, wanted: int) -> str:
        return (
            f"你每条消息加了 2 个分隔字符，得到 {got}。本章说“estimateContextChars() 对每条完整 Message"
            " 使用 JSON.stringify(message) 的字符长度，再加分隔开销”：分隔的是消息与消息，一个分隔符是"
            f"一个字符（会话文件里是每行末尾的 \\n，Windows 上也只写 \\n，不写 \\r\\n），"
            f"每条 1 个就是 {wanted}"
        )

    # --- 04/05 进阶: linear at worst ------------------------------------------------------
    def linear_units_case(self, pairs: int) -> str:
        return f"进阶：{pairs} 条孤立结果，每条前面都有一个不相干的 assistant——也是线性的"

    linear_wrong_units: str = "切出的单元和本章的不同：先让上面的用例全部通过"

    def linear_units_too_many(self, reads: int, limit: int) -> str:
        return (
            f"单元对了，但读了 {reads} 次 assistant 的 tool_calls（线性的做法不超过 {limit} 次）："
            "每条孤立结果都往前把所有 assistant 又看了一遍，这是本章内层循环的平方级；"
            "先用一次前向扫描记下每个 call id 最近的声明者"
        )

    def linear_trim_case(self, count: int) -> str:
        return f"进阶：{count} 条消息、预算装得下全部——已用字符数累加，不重新量"

    linear_wrong_trim: str = "裁剪结果和本章的不同：先让上面的用例全部通过"

    def linear_trim_too_many(self, reads: int, limit: int) -> str:
        return (
            f"结果对了，但把消息序列化了 {reads} 次（累加的做法不超过 {limit} 次）："
            "每装一个单元都把 unit + kept 重新量了一遍，这是本章算法的平方级；"
            "只记一个已用字符数，每装一个单元加上它的估算"
        )

    def record_raised(self, count: int, tag: str, error: str) -> str:
        return f"第 {count} 次 record（{tag}）抛出了 {error}"

    def record_differs(
        self, count: int, tag: str, where: str, expected: Sequence[str], got: Sequence[str]
    ) -> str:
        """After record call `count`, `where` (内存 or 磁盘上) differs: each message as
        `#index label`; past two, the ones both sides share are one `#0 到 #N 两边相同`."""
        same = 0
        while same < min(len(expected), len(got)) and expected[same] == got[same]:
            same += 1
        skipped = same if same > 2 else 0

        def shown(tags: Sequence[str]) -> str:
            rest = [f"#{i} {t}" for i, t in enumerate(tags) if i >= skipped]
            return (
                "["
                + ", ".join(([f"#0 到 #{skipped - 1} 两边相同"] if skipped else []) + rest)
                + "]"
            )

        return (
            f"第 {count} 次 record（{tag}）之后，{where}应当有 {len(expected)} 条 {shown(expected)}，"
            f"实际有 {len(got)} 条 {shown(got)}"
        )

    def record_rewrote(self, count: int, tag: str) -> str:
        return (
            f"第 {count} 次 record（{tag}）之后，文件里原有的字节变了（原来中间的一个空行没了）："
            "record 应当只在文件末尾追加一行，不重写整个文件。本章说“一条消息转换为一行 JSON 并追加；"
            "这避免每轮重写整个历史。”设计表里“单文件全量重写”是被否决的那一种：每轮 O(n) 写放大，"
            "写到一半中断还会丢掉已有的历史"
        )

    memory: str = "内存"
    disk: str = "磁盘上"

    # --- a traceback in a reader's cell (tracebacks) ----------------------------------------
    def kit_frames_hidden(self, count: int) -> str:
        return f"……（本包内部的 {count} 层调用没有显示；要看完整的回溯，运行 %tb）"

    # --- the projector switch (style.set_display) ----------------------------------------------
    def display(self, scale: float, high_contrast: bool) -> str:
        size = (
            "默认大小"
            if scale == 1
            else f"放大 {scale:g} 倍"
            if scale > 1
            else f"缩小到 {scale:g} 倍"
        )
        return f"显示：{size}，{'高对比度' if high_contrast else '普通对比度'}"

    # --- notebook 06's demo ------------------------------------------------------------------
    def demo_state(self, lines: int, stages: Sequence[str]) -> str:
        done = "、".join(stages) if stages else "还没有"
        return f"演示 06：session.jsonl 有 {lines} 行；已准备的阶段：{done}"

    def stage_stopped(self, stage: str, sent: int, budget: int | None) -> str:
        return f"{stage}发出 {sent} 次请求后停下，下一次请求装不下（预算 {budget}）："

    # --- notebook 08's plots: titles, axes, legends, bars --------------------------------------
    plot_messages: str = "历史里的消息条数"
    plot_cpu_seconds: str = "CPU 时间（秒，5 次里最快的一次）"
    plot_full_budget: str = "预算装得下整段历史：耗时随消息数增长（双对数坐标）"

    def plot_turn_budget(self, budget: int) -> str:
        return f"每轮预算 {budget:,} 字符：耗时随消息数增长（双对数坐标）"

    plot_literal: str = "照本章逐行写的算法"
    plot_langchain: str = "LangChain trim_messages"
    plot_first_turn: str = "trim_context 第一轮"
    plot_later_turns: str = "trim_context 之后各轮"
    plot_chars_per_token: str = "每个 token 合多少字符（cl100k_base）"
    plot_token_title: str = "一个 token 是几个字符？"
    sample_english: str = "英文"
    sample_chinese: str = "中文"
    sample_code: str = "代码"
    sample_emoji: str = "emoji"


CHINESE: Final = Words()


def words() -> Words:
    """The wording: `Words`, the one place to change a word."""
    return CHINESE


class _Unstated:
    """A budget the caller does not know (a view of a finished run): say nothing of it."""


UNSTATED: Final = _Unstated()
Budget = int | None | _Unstated


def request_line(
    number: int,
    disk: Messages,
    sent: Messages,
    budget: Budget = UNSTATED,
    *,
    disk_chars: bool = True,
) -> str:
    """`listing.request_line`, the line the CLI's `chat` prints too; `UNSTATED`: no budget
    said; `disk_chars=False`: no characters on disk (in 06 they would answer its exercise)."""
    if disk_chars and not isinstance(budget, _Unstated):
        return listing.request_line(number, disk, sent, budget)
    w = words()
    on_disk = w.messages(len(disk))
    if disk_chars:
        on_disk = w.messages_chars(len(disk), estimate_context_chars(disk))
    said = w.messages_chars(len(sent), estimate_context_chars(sent))
    limit = "" if isinstance(budget, _Unstated) else f"（{w.budget(budget)}）"
    return w.request_said(w.request(number), on_disk, said, limit)
