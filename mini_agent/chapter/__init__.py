# ruff: noqa: RUF002  # 中文全角标点
"""本章的代码，照搬成 Python：`src/session.ts`、`src/context.ts` 和老z 画的 `runAgent`。

- `session.py`：`record`、`calls`、`parseSessionMessage`、`loadSession`、`appendSession`
- `context.py`：`estimateContextChars`、`trimContext` 的单元扫描与装预算的循环
- `agent.py`：`runAgent` 和它的 `record()`（本章只画了图，没有给源码：照图写的）

名字是本章的名字换成 snake_case，分支和循环与本章一一对应，注释照本章的口吻写；笔记本 01–07
把它们放在本章节选的旁边，练习的检查也拿它们当“照本章做的答案”。它们能运行，但只做本章做的事：
工具包自己的实现在 `mini_agent` 的顶层（`mini_agent/session.py`、`context.py`、`agent.py`），
与本章有几处有意的不同，每一处见 docs/ARCHITECTURE.md 的差异表和附录 07a。
"""
