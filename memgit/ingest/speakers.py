"""The speaker model every importer feeds: who said a turn, and what of it is speech.

Each importer knows its product's records and says, per turn, who spoke: the owner (the
person whose memory this is), the assistant, another person (named), or a summary a model
wrote. Harness and system text never gets this far: an importer drops its product's
control records and yields a `Skip` naming why. What products share is settled here, in
one place, for every importer's turn:

- harness blocks that agents' harnesses write into a user message (a `<system-reminder>`
  Claude Code appends, the `<environment_context>` Codex sends, a `<task-notification>`
  from a background task, the `!` shell's `<bash-stdout>`) are cut out of the text, and a
  turn that was nothing else is dropped as harness text;
- a turn of another person keeps their name, so memory can attribute it to them and never
  to the owner; a summary is kept as context, never as what anyone said.

The dream reads only OWNER and ASSISTANT turns as conversation (`memgit.dream.collect`).
"""
from __future__ import annotations

import re
from dataclasses import replace

from memgit.ingest.base import OTHER, SESSION_ROLES, Skip, Turn

# Tags a harness wraps around text it adds to a conversation; none of it is a person's words.
# (Claude Code: system-reminder, task-notification, bash-*, ide_*, local-command-*, command-*,
# user-prompt-submit-hook; Codex CLI: environment_context, user_instructions, turn_aborted,
# user_shell_command; OpenClaw/pi: the same shell tags.)
HARNESS_TAGS = (
    "system-reminder", "task-notification", "bash-input", "bash-stdout", "bash-stderr",
    "ide_opened_file", "ide_selection", "ide_diagnostics", "local-command-stdout",
    "local-command-stderr", "local-command-caveat", "command-name", "command-message",
    "command-args", "command-contents", "user-prompt-submit-hook", "environment_context",
    "user_instructions", "turn_aborted", "user_shell_command", "permissions_instructions",
    "system_instruction", "developer_instructions", "post-tool-use-hook", "tool_use_error",
)

_TAGS = "|".join(re.escape(t) for t in HARNESS_TAGS)
# A whole block, with its attributes; blocks do not nest in what harnesses write.
_BLOCK = re.compile(rf"<({_TAGS})(?:\s[^<>]*)?>.*?</\1\s*>", re.S)
# An opening tag whose block never closes (a cut-off notification): everything after it is harness.
_OPEN = re.compile(rf"<({_TAGS})(?:\s[^<>]*)?>", re.S)
_SELF_CLOSING = re.compile(rf"<({_TAGS})(?:\s[^<>]*)?/>")


def strip_harness(text: str) -> str:
    """`text` without the harness blocks in it; what is left, stripped."""
    out = _SELF_CLOSING.sub("", _BLOCK.sub("", text))
    m = _OPEN.search(out)
    if m:
        out = out[:m.start()]
    return out.strip()


def settle(turn: Turn) -> Turn | Skip:
    """The turn as memory may keep it, or why it is left out."""
    if turn.role not in SESSION_ROLES:
        return Skip(f"{turn.role or 'unnamed'} record")
    text = strip_harness(turn.text)
    if not text:
        return Skip("harness text")
    speaker = turn.speaker.strip() if turn.role == OTHER else ""
    if turn.role == OTHER and not speaker:
        speaker = "someone else"
    if text == turn.text and speaker == turn.speaker:
        return turn
    return replace(turn, text=text, speaker=speaker)
