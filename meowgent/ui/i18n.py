"""Every sentence the page shows, in English and Traditional Chinese (zh-TW).

`t(language, key, **values)` formats one entry. Labels, the approval card, the banner, model
facts and errors all come from here, so a person reading either language gets all of it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meowgent.chats.service import ChatError

from meowgent.policy.risks import Risk

ENGLISH, CHINESE = "en", "zh-TW"
LANGUAGES = {ENGLISH: "English", CHINESE: "繁體中文"}

_TEXT: dict[str, dict[str, str]] = {
    ENGLISH: {
        # page
        "language": "Language",
        "status_checking": "Checking the model server…",
        "model": "Model",
        "think": "Think before answering",
        "get_model": "Get a model",
        "download": "Download",
        "workspace": "**Workspace**  \n`{folder}`",
        "new_chat": "+ New chat",
        "untitled_chat": "New chat",
        "your_chats": "Your chats",
        "allowed_here": "Allowed in this chat",
        "pick_to_revoke": "Pick one to revoke it",
        "revoke": "Revoke",
        "rules": "Rules",
        "rules_help": "Which calls run without asking. Each rule has a `tool`, an `action` (`allow`, `ask` or "
        "`deny`) and maybe a pattern: `command`, `path` or `host`. Deny beats ask beats allow. Without rules, "
        "reading runs at once and everything else asks. These rules judge your chats only; the server's own "
        "`rules.json` applies to everyone.",
        "save_rules": "Save rules",
        "rules_saved": "✅ Saved {count} rule(s) for your chats. They apply from the next request.",
        "rules_not_saved": "⚠️ Not saved: {detail}",
        "this_chat": "This chat",
        "name": "Name",
        "rename": "Rename",
        "delete": "🗑 Delete this chat",
        "confirm_delete": "Yes, delete it",
        "keep": "Keep it",
        "show_audit": "Show the approval log",
        "no_audit": "No approvals in this chat yet.",
        "audit_proposed": "Proposed",
        "audit_ran": "What ran",
        "audit_ran_same": "ran as proposed",
        "audit_not_run": "nothing ran",
        "audit_decision": "Decision",
        "audit_by": "by {who}",
        "audit_decided": "{decision} ({scope}), {who}",
        "audit_reason": "Reason",
        "audit_outcome": "How it ended",
        # the approval log's values, by the codes meowgent.persist.calls.AuditRow holds
        "audit_decision_approved": "approved",
        "audit_decision_rejected": "rejected",
        "audit_decision_not_approved": "rejected by your rules",
        "audit_decision_allowed": "allowed without asking",
        "audit_scope_once": "this time only",
        "audit_scope_rules_or_chat": "by your rules or a permission for this chat",
        "audit_scope_for_chat": "for this chat: {scope}",
        "audit_decided_by_owner_browser": "you, in this browser",
        "audit_decided_by_owner": "you",
        "audit_outcome_done": "it ran",
        "audit_outcome_error": "it ran and failed",
        "audit_outcome_rejected": "it did not run",
        "export": "Prepare downloads",
        "chat": "Chat",
        "welcome": "### 🐱 Hi, I'm Meowgent\n\nI can read and change files in your workspace, run commands and read "
        "web pages. **I always ask before I change anything.** Try one of the examples below.",
        "examples": "Examples",
        "edit_before": "✏️ Change it before approving",
        "approve": "✅ Approve",
        "approve_all": "✅ Approve all",
        "approve_chat": "✅ Allow for this chat",
        "reject": "✋ Reject",
        "scope_prefix": "“Allow for this chat” allows this exact command. To allow every command that starts with "
        "some words instead, type them here (optional):",
        "reason": "If you reject, tell the assistant why (optional)",
        "message": "Ask me anything, then press Enter",
        "stop": "⏹ Stop",
        "retry": "↻ Retry last answer",
        "invalid_edit_json": "The changed request isn't valid JSON ({detail}). Nothing was run.",
        # approval card
        "card_one": "The assistant wants to do this",
        "card_many": "The assistant wants to do {count} things, in this order",
        "card_many_hint": "“Approve” decides the first one alone; “Approve all” runs all of them, in this order.",
        "run_command": "Run this command in the folder {folder}:",
        "create_file": "Create the new file {path} with this text ({amount}):",
        "replace_file": "Replace the file {path} (now {size} bytes) with this text ({amount}):",
        "write_outside": "Write the file {path} ({amount}). It is outside the workspace, so it will be refused.",
        "write_invalid": "Write the file {path} ({amount}). It is not a valid file name, so it will be refused.",
        "amount_one": "1 line, {size} bytes",
        "amount_many": "{lines} lines, {size} bytes",
        "edit_file": "Change part of the file {path} like this:",
        "fetch": "Read a web page from {host}:",
        "unknown_site": "an unknown site",
        "other_tool": "Use the tool {tool} with:",
        "heads_up": "⚠️ Heads up: {risks}.",
        "risk_this": "this {risks}",
        "risk_separator": ", ",
        "risk_sentences": ". ",
        # what a call does, as the titles of chat panels and the lines of the card
        "act_write": "Write {path}",
        "act_writing": "Writing {path}… {lines} lines so far",
        "act_writing_one": "Writing {path}… 1 line so far",
        "act_edit": "Edit {path}",
        "act_editing": "Editing {path}…",
        "act_run": "Run {command}",
        "act_fetch": "Read the page {page}",
        "act_read": "Read {path}",
        "act_list": "List files in {path}",
        "act_list_workspace": "List the files in the workspace",
        "act_search": "Search for {pattern}",
        "act_search_in": "Search for {pattern} in {path}",
        "act_other": "Use the tool {tool}",
        "label_path": "File",
        "label_content": "Text",
        "label_command": "Command",
        "label_url": "Address",
        "label_pattern": "Looking for",
        "label_glob": "Which files",
        "label_old": "Before",
        "label_new": "After",
        "label_offset": "Skip",
        "label_limit": "At most",
        "diff_before": "before",
        "diff_after": "after",
        "technical": "Technical details",
        "output": "Output",
        "show_all": "Show all ({lines} lines)",
        "no_output": "(no output)",
        # MCP servers: the card and the sidebar
        "mcp_call": "Use the tool {tool} of the MCP server {server} with:",
        "mcp_hints": "The server says this tool {hints}. That is only its own claim, so it still asks you.",
        "mcp_hint_read_only": "only reads",
        "mcp_hint_destructive": "may delete or overwrite things",
        "mcp_hint_idempotent": "can run twice with the same effect",
        "mcp_hint_open_world": "reaches services outside this computer",
        "mcp_servers": "MCP servers",
        "mcp_none": "No MCP servers. List them in `{path}` to use their tools (see the README).",
        "mcp_config_error": "⚠️ The MCP configuration cannot be used: {detail}",
        "mcp_starting": "⏳ starting…",
        "mcp_running": "🟢 running, {count} tool(s)",
        "mcp_stopped": "🔴 stopped: {detail}",
        "mcp_left_out": "Not offered: {detail}",
        "mcp_off_here": "Turned off in this chat",
        "mcp_allow_here": "Allowed without asking in this chat",
        "mcp_restart": "Restart stopped servers",
        # chat panels
        "thinking": "Thinking",
        "preparing": "Preparing an action…",
        "invalid_call": "A request the assistant wrote wrong",
        "log_writing": "writing…",
        "writing_call": "The model is writing a tool call… {seconds} s",
        "log_waiting": "waiting for your approval",
        "log_error": "failed",
        "log_rejected": "rejected",
        "log_invalid": "not run: the call was malformed",
        "log_retried": "not run: Ollama could not read it, so the model writes it again",
        "log_interrupted": "interrupted",
        "log_edited": "ran as you changed it",
        "stopped": "⏹ Stopped. The answer above is incomplete.",
        "more_chars": "… {count} more characters not shown here …",
        "no_arguments": "(no arguments)",
        # banner, models, downloads
        "banner_ok": "🟢 Connected to Ollama {version}",
        "banner_down": "🔴 Can't reach Ollama at `{host}`. Start it with `ollama serve` (or open the Ollama app), "
        "then download a model: `ollama pull {model}`. This page checks again every few seconds.",
        "banner_empty": "🟡 Ollama {version} is running but has no models yet. Download one under “Get a model”, "
        "or in a terminal: `ollama pull {model}`",
        "banner_missing": "🟡 The model **{model}** isn't installed. Download it under “Get a model”.",
        "parameters": "{size} parameters",
        "facts": "**{name}**: {facts}.",
        "fact_separator": ", ",
        "can": "Can {abilities}.",
        "and": " and ",
        "ability_tools": "use tools",
        "ability_thinking": "think first",
        "ability_vision": "see images",
        "no_native_tools": "No built-in tool support: Meowgent explains the tools in its instructions instead.",
        "context_window": "Context window: {in_use} tokens in use (the model allows {limit}).",
        "context_meter": "Context: {bar} {used} of {total} tokens ({percent}%)",
        "pull_part": "Downloading part {layer}: {done} of {total} ({percent}%)",
        "pull_manifest": "Looking up the model…",
        "pull_verify": "Checking the download…",
        "pull_finish": "Finishing…",
        "pull_done": "Done.",
        "pull_ready": "✅ **{model}** is ready. Pick it in the list above.",
        # errors the page shows by kind; the English text is the message itself
        "only_served_at": "This page is only served at {address}",
        # what a chat's action could not do, by meowgent.chats.service.ChatErrorKind
        "chat_error_unavailable": "This conversation is not available. Start a new chat.",
        "chat_error_owner_unknown": "Open Meowgent's page first: this request comes from no browser or account it "
        "knows.",
        "chat_error_type_first": "Type a message first.",
        "chat_error_not_waiting": "That request is no longer waiting for you, so nothing was run.",
        "chat_error_edit_invalid": "The changed request can't run: {detail}",
        "chat_error_edit_denied": "The changed request is not allowed by your rules: {detail}",
        "chat_error_busy": "An answer is still running. Wait for it, or press Stop.",
        "chat_error_name_first": "Give the chat a name first.",
        # page layout: the menu, the send button, the edit fields and the pointer to the card
        "menu": "☰ Menu",
        "send": "Send",
        "see_card": "⬇ Waiting for your decision below.",
        "field_path": "File",
        "field_content": "Its new text",
        "field_old": "Text to replace",
        "field_new": "Replace it with",
        "field_command": "Command",
        "field_url": "Web address",
        "field_json": "All details (JSON)",
    },
    CHINESE: {
        "language": "語言",
        "status_checking": "正在檢查模型伺服器…",
        "model": "模型",
        "think": "回答前先思考",
        "get_model": "下載模型",
        "download": "下載",
        "workspace": "**工作資料夾**  \n`{folder}`",
        "new_chat": "+ 新對話",
        "untitled_chat": "新對話",
        "your_chats": "你的對話",
        "allowed_here": "此對話中已允許",
        "pick_to_revoke": "勾選要撤銷的項目",
        "revoke": "撤銷",
        "rules": "規則",
        "rules_help": "哪些動作不必詢問就能執行。每條規則有 `tool`（工具）、`action`（`allow` 允許、`ask` 詢問、"
        "`deny` 禁止），以及可選的 `command`、`path` 或 `host` 樣式。禁止優先於詢問，詢問優先於允許。"
        "沒有規則時，讀取會直接執行，其餘都會先詢問。這些規則只用於你的對話；伺服器自己的 `rules.json` 適用於所有人。",
        "save_rules": "儲存規則",
        "rules_saved": "✅ 已為你的對話儲存 {count} 條規則，從下一個請求開始生效。",
        "rules_not_saved": "⚠️ 沒有儲存：{detail}",
        "this_chat": "這個對話",
        "name": "名稱",
        "rename": "重新命名",
        "delete": "🗑 刪除這個對話",
        "confirm_delete": "確定刪除",
        "keep": "保留",
        "show_audit": "顯示核准紀錄",
        "no_audit": "這個對話還沒有核准紀錄。",
        "audit_proposed": "提議內容",
        "audit_ran": "實際執行",
        "audit_ran_same": "照提議執行",
        "audit_not_run": "沒有執行任何動作",
        "audit_decision": "決定",
        "audit_by": "由{who}決定",
        "audit_decided": "{decision}（{scope}），{who}",
        "audit_reason": "原因",
        "audit_outcome": "結果",
        "audit_decision_approved": "已核准",
        "audit_decision_rejected": "已拒絕",
        "audit_decision_not_approved": "被你的規則拒絕",
        "audit_decision_allowed": "不必詢問即允許",
        "audit_scope_once": "只限這一次",
        "audit_scope_rules_or_chat": "依你的規則或此對話中的允許",
        "audit_scope_for_chat": "此對話中都允許：{scope}",
        "audit_decided_by_owner_browser": "你（在這個瀏覽器）",
        "audit_decided_by_owner": "你",
        "audit_outcome_done": "已執行",
        "audit_outcome_error": "已執行但失敗",
        "audit_outcome_rejected": "沒有執行",
        "export": "準備下載檔案",
        "chat": "對話",
        "welcome": "### 🐱 你好，我是 Meowgent\n\n我可以讀取和修改工作資料夾裡的檔案、執行指令、閱讀網頁。"
        "**任何修改都會先問過你**。試試下面的範例吧。",
        "examples": "範例",
        "edit_before": "✏️ 核准前先修改",
        "approve": "✅ 核准",
        "approve_all": "✅ 全部核准",
        "approve_chat": "✅ 此對話中都允許",
        "reject": "✋ 拒絕",
        "scope_prefix": "「此對話中都允許」只允許完全相同的指令。"
        "若要允許以某些字開頭的所有指令，請在這裡輸入（選填）：",
        "reason": "如果拒絕，可以告訴助理原因（選填）",
        "message": "輸入任何問題，按 Enter 送出",
        "stop": "⏹ 停止",
        "retry": "↻ 重新回答",
        "invalid_edit_json": "修改後的請求不是有效的 JSON（{detail}），所以沒有執行。",
        "card_one": "助理想要執行以下動作",
        "card_many": "助理想依序執行 {count} 個動作",
        "card_many_hint": "「核准」只決定第一個動作；「全部核准」會依序執行全部動作。",
        "run_command": "在資料夾 {folder} 中執行這個指令：",
        "create_file": "建立新檔案 {path}，內容如下（{amount}）：",
        "replace_file": "取代檔案 {path}（目前 {size} 位元組），新內容如下（{amount}）：",
        "write_outside": "寫入檔案 {path}（{amount}）。這個位置在工作資料夾之外，會被拒絕。",
        "write_invalid": "寫入檔案 {path}（{amount}）。這不是有效的檔名，會被拒絕。",
        "amount_one": "1 行，{size} 位元組",
        "amount_many": "{lines} 行，{size} 位元組",
        "edit_file": "修改檔案 {path} 的一部分，差異如下：",
        "fetch": "讀取網頁，來源是 {host}：",
        "unknown_site": "未知的網站",
        "other_tool": "使用工具 {tool}，參數如下：",
        "heads_up": "⚠️ 請注意：{risks}。",
        "risk_this": "這個動作會{risks}",
        "risk_separator": "、",
        "risk_sentences": "。",
        "act_write": "寫入 {path}",
        "act_writing": "正在寫入 {path}…目前 {lines} 行",
        "act_writing_one": "正在寫入 {path}…目前 1 行",
        "act_edit": "修改 {path}",
        "act_editing": "正在修改 {path}…",
        "act_run": "執行 {command}",
        "act_fetch": "閱讀網頁 {page}",
        "act_read": "讀取 {path}",
        "act_list": "列出 {path} 裡的檔案",
        "act_list_workspace": "列出工作資料夾裡的檔案",
        "act_search": "搜尋 {pattern}",
        "act_search_in": "在 {path} 中搜尋 {pattern}",
        "act_other": "使用工具 {tool}",
        "label_path": "檔案",
        "label_content": "內容",
        "label_command": "指令",
        "label_url": "網址",
        "label_pattern": "搜尋內容",
        "label_glob": "檔案範圍",
        "label_old": "修改前",
        "label_new": "修改後",
        "label_offset": "略過",
        "label_limit": "最多",
        "diff_before": "修改前",
        "diff_after": "修改後",
        "technical": "技術細節",
        "output": "輸出",
        "show_all": "顯示全部（{lines} 行）",
        "no_output": "（沒有輸出）",
        # MCP servers: the card and the sidebar
        "mcp_call": "使用 MCP 伺服器 {server} 的工具 {tool}，參數如下：",
        "mcp_hints": "伺服器說這個工具{hints}。這只是它自己的說法，所以仍會先問你。",
        "mcp_hint_read_only": "只會讀取",
        "mcp_hint_destructive": "可能刪除或覆寫資料",
        "mcp_hint_idempotent": "重複執行結果相同",
        "mcp_hint_open_world": "會連到這台電腦以外的服務",
        "mcp_servers": "MCP 伺服器",
        "mcp_none": "沒有 MCP 伺服器。把它們寫在 `{path}` 就能使用它們的工具（見 README）。",
        "mcp_config_error": "⚠️ 無法使用 MCP 設定：{detail}",
        "mcp_starting": "⏳ 啟動中…",
        "mcp_running": "🟢 執行中，{count} 個工具",
        "mcp_stopped": "🔴 已停止：{detail}",
        "mcp_left_out": "未提供：{detail}",
        "mcp_off_here": "在這個對話中關閉",
        "mcp_allow_here": "在這個對話中不必詢問就允許",
        "mcp_restart": "重新啟動已停止的伺服器",
        "thinking": "思考過程",
        "preparing": "正在準備動作…",
        "invalid_call": "助理寫錯的請求",
        "log_writing": "撰寫中…",
        "writing_call": "模型正在撰寫工具呼叫… {seconds} 秒",
        "log_waiting": "等待你核准",
        "log_error": "失敗",
        "log_rejected": "已拒絕",
        "log_invalid": "未執行：呼叫的格式錯誤",
        "log_retried": "未執行：Ollama 讀不懂，模型會重寫一次",
        "log_interrupted": "已中斷",
        "log_edited": "已依你的修改執行",
        "stopped": "⏹ 已停止。上面的回答不完整。",
        "more_chars": "… 另有 {count} 個字元沒有顯示 …",
        "no_arguments": "（沒有參數）",
        "banner_ok": "🟢 已連上 Ollama {version}",
        "banner_down": "🔴 連不上 Ollama（`{host}`）。請執行 `ollama serve`（或打開 Ollama 應用程式），"
        "再下載模型：`ollama pull {model}`。這個頁面每隔幾秒會自動重新檢查。",
        "banner_empty": "🟡 Ollama {version} 已啟動，但還沒有任何模型。"
        "請在「下載模型」下載，或在終端機執行：`ollama pull {model}`",
        "banner_missing": "🟡 模型 **{model}** 尚未安裝，請在「下載模型」下載。",
        "parameters": "{size} 個參數",
        "facts": "**{name}**：{facts}。",
        "fact_separator": "，",
        "can": "能夠{abilities}。",
        "and": "、",
        "ability_tools": "使用工具",
        "ability_thinking": "先思考再回答",
        "ability_vision": "看圖片",
        "no_native_tools": "不支援內建工具：Meowgent 會改在指示中說明工具的用法。",
        "context_window": "上下文長度：使用 {in_use} 個 token（模型上限 {limit}）。",
        "context_meter": "上下文：{bar} {used} / {total} tokens（{percent}%）",
        "pull_part": "正在下載 {layer}：{done} / {total}（{percent}%）",
        "pull_manifest": "正在查詢模型…",
        "pull_verify": "正在檢查下載內容…",
        "pull_finish": "即將完成…",
        "pull_done": "完成。",
        "pull_ready": "✅ **{model}** 已可使用，請在上方清單中選擇。",
        "only_served_at": "這個網頁只在 {address} 提供",
        "chat_error_unavailable": "無法開啟這個對話，請開始新的對話。",
        "chat_error_owner_unknown": "請先開啟 Meowgent 的網頁：這個請求不是來自它認得的瀏覽器或帳號。",
        "chat_error_type_first": "請先輸入訊息。",
        "chat_error_not_waiting": "這個請求已經不在等待你核准，所以沒有執行任何動作。",
        "chat_error_edit_invalid": "修改後的請求無法執行：{detail}",
        "chat_error_edit_denied": "你的規則不允許修改後的請求：{detail}",
        "chat_error_busy": "還有回答正在進行。請等它完成，或按「停止」。",
        "chat_error_name_first": "請先為對話取個名字。",
        "menu": "☰ 選單",
        "send": "送出",
        "see_card": "⬇ 正在等你在下方決定。",
        "field_path": "檔案",
        "field_content": "新的內容",
        "field_old": "要取代的文字",
        "field_new": "改成",
        "field_command": "指令",
        "field_url": "網址",
        "field_json": "所有細節（JSON）",
    },
}

# Risk notes (meowgent.policy.risks) in each language: phrases that follow "this …", and sentences of their own.
_RISKS = {
    ENGLISH: {
        Risk.DELETES: "deletes files",
        Risk.NETWORK: "uses the network",
        Risk.ADMIN: "runs with admin rights",
        Risk.PERMISSIONS: "changes permissions",
        Risk.OVERWRITES: "overwrites an existing file",
        Risk.EDITS: "edits a file",
    },
    CHINESE: {
        Risk.DELETES: "刪除檔案",
        Risk.NETWORK: "連上網路",
        Risk.ADMIN: "以系統管理員權限執行",
        Risk.PERMISSIONS: "變更權限",
        Risk.OVERWRITES: "覆寫既有的檔案",
        Risk.EDITS: "修改檔案",
    },
}
_RISK_SENTENCES = {
    ENGLISH: {Risk.HIDDEN: "Meowgent can't tell everything this runs"},
    CHINESE: {Risk.HIDDEN: "Meowgent 無法確知這會執行的所有內容"},
}

# Errors in the chat, by ErrorEvent.kind. Commands in backticks from the English message are kept.
_ERRORS = {
    "unreachable": "連不上 Ollama。請執行 `ollama serve`（或打開 Ollama 應用程式），然後再試一次。",
    "not_found": "這個模型還沒有安裝。請在終端機下載：",
    "unsupported": "這個模型不支援這項功能。",
    "broken": "模型伺服器的回覆中斷了。已經收到的內容都保留著，可以再試一次。",
    "stalled": "模型太久沒有回應，可能卡住了或記憶體不足。請再試一次，或改用較小的模型。",
    "server": "Ollama 回報了錯誤。",
    "not_ollama": "這個位址回應的不是 Ollama，請檢查 OLLAMA_HOST。",
    "context_too_small": "你的訊息加上工具說明超過了模型的上下文長度。請縮短訊息，或用 --num-ctx 提高上限。",
    "max_turns": "模型連續回覆太多次仍沒有最終答案，所以先停下來了。傳一則訊息讓它繼續。",
    "interrupted": "Meowgent 在寫這個回答時停止了，所以回答被截斷。傳一則訊息就能繼續。",
    "internal": "Meowgent 內部發生錯誤。",
    "nothing_to_retry": "還沒有可以重新回答的訊息。",
    "bad_host": "OLLAMA_HOST 不是可以連上 Ollama 的位址，請改用像 http://127.0.0.1:11434 這樣的位址。",
    "reply_too_long": "模型的回覆太長，已在上限處停止。已寫出的內容都保留著；傳一則訊息讓它繼續，或請它回答短一點。",
    "answer_too_long": (
        "這次回答的工具呼叫和結果縮短後仍放不進模型的上下文。傳一則訊息從這裡繼續，或用 --num-ctx 提高上限。"
    ),
    "call_rejected": (
        "Ollama 讀不懂模型寫的工具呼叫，請模型重寫後還是一樣，所以這個回答先停在這裡。"
        "對話都保留著，可以再試一次或換一個模型。"
    ),
}

# The context-trimming notice (meowgent.context.describe_fit) in parts, so each language can say it whole.
_TRIMMED = re.compile(
    r"(?P<results>Long tool output was shortened)?(?: and )?"
    r"(?:(?P<count>\d+) earlier messages? (?:was|were) left out)? to fit the model's (?P<size>\S+)-token context\."
    r" The full history is kept\."
)


def t(language: str, key: str, **values: object) -> str:
    """The entry `key` in `language` (English if missing), formatted with `values`."""
    text = _TEXT.get(language, _TEXT[ENGLISH]).get(key) or _TEXT[ENGLISH][key]
    return text.format(**values) if values else text


def pick_language(accept_language: str | None) -> str:
    """zh-TW for a browser that prefers Chinese (Traditional Chinese is the one we have), else English."""
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return CHINESE
        if tag.startswith("en"):
            return ENGLISH
    return ENGLISH


def risks(language: str, notes: tuple[Risk, ...]) -> str:
    """Risk notes in `language`: "this …" and the phrases joined, then the notes that are sentences of their own."""
    sentences = _RISK_SENTENCES.get(language, _RISK_SENTENCES[ENGLISH])
    phrases = [_RISKS.get(language, _RISKS[ENGLISH])[note] for note in notes if note not in sentences]
    said = [t(language, "risk_this", risks=t(language, "risk_separator").join(phrases))] if phrases else []
    return t(language, "risk_sentences").join(said + [sentences[note] for note in notes if note in sentences])


def chat_error_text(language: str, error: ChatError) -> str:
    """What a chat's action could not do, in `language`."""
    return t(language, f"chat_error_{error.kind.value}", **error.values)


_NOTICES = {
    "call_retry": "Ollama 讀不懂模型寫的工具呼叫，所以 Meowgent 請模型重寫一次。",
    "call_too_large": (
        "模型開始寫一個超過 {limit} 個字元的工具呼叫。Meowgent 在它執行前就停下，並請模型分成較小的幾段送出。"
    ),
    "too_many_calls": (
        "模型想在一次回覆裡呼叫超過 {limit} 次工具。Meowgent 處理了前 {limit} 次，在那裡停下這次回覆，"
        "並請模型在下一次回覆中做剩下的呼叫。"
    ),
}


def notice_text(language: str, message: str, kind: str = "") -> str:
    """A notice for the chat: in Chinese, said by its kind (its limit kept), or the context-trimming notice."""
    if language == ENGLISH:
        return message
    if kind in _NOTICES:
        limit = re.search(r"\d[\d,]*", message)
        return _NOTICES[kind].format(limit=limit[0] if limit else "")
    trimmed = _TRIMMED.fullmatch(message)
    if trimmed is None:
        return message
    parts = []
    if trimmed["results"]:
        parts.append("較長的工具輸出已縮短")
    if trimmed["count"]:
        parts.append(f"省略了 {trimmed['count']} 則較早的訊息")
    return f"為了放進模型 {trimmed['size']} token 的上下文，{'，並'.join(parts)}。完整的紀錄都還保留著。"


def error_text(language: str, message: str, kind: str) -> str:
    """An error for the chat: the message itself in English; in Chinese, its translation by kind, commands kept."""
    if language == ENGLISH or kind not in _ERRORS:
        return message
    text = _ERRORS[kind]
    commands = re.findall(r"`[^`]+`", message)
    if kind == "not_found":
        text += "、".join(commands)
    return text


# ---- "Allow for this chat": what each tool's chat scope allows (meowgent.ui.scopes) ----
_TEXT[ENGLISH].update(
    {
        "approve_chat_command": "✅ Allow this exact command for this chat",
        "approve_chat_write_file": "✅ Allow writing {path} for this chat",
        "approve_chat_edit_file": "✅ Allow editing {path} for this chat",
        "approve_chat_web_fetch": "✅ Allow reading pages from {host} for this chat",
        "approve_chat_tool": "✅ Allow every {tool} call for this chat",
        "scope_typed_prefix": "To allow every command that starts with some words instead, type them here "
        "(optional), such as git status:",
        "scope_typed_path": "To allow a whole folder or a pattern instead, type it here (optional), "
        "such as docs or *.md:",
        "allows_command": "this exact command: {command}",
        "allows_prefix": "commands starting with “{prefix}”",
        "allows_write_file_path": "writing {path}",
        "allows_edit_file_path": "editing {path}",
        "allows_host": "reading pages from {host}",
        "allows_tool": "every {tool} call",
        "allows_server": "every tool of the MCP server {server}",
    }
)
_TEXT[CHINESE].update(
    {
        "approve_chat_command": "✅ 此對話中允許這個完全相同的指令",
        "approve_chat_write_file": "✅ 此對話中允許寫入 {path}",
        "approve_chat_edit_file": "✅ 此對話中允許修改 {path}",
        "approve_chat_web_fetch": "✅ 此對話中允許讀取 {host} 的網頁",
        "approve_chat_tool": "✅ 此對話中允許所有 {tool} 呼叫",
        "scope_typed_prefix": "若要改為允許以某些字開頭的所有指令，請在這裡輸入（選填），例如 git status：",
        "scope_typed_path": "若要改為允許整個資料夾或一個樣式，請在這裡輸入（選填），例如 docs 或 *.md：",
        "allows_command": "完全相同的指令：{command}",
        "allows_prefix": "以「{prefix}」開頭的指令",
        "allows_write_file_path": "寫入 {path}",
        "allows_edit_file_path": "修改 {path}",
        "allows_host": "讀取 {host} 的網頁",
        "allows_tool": "所有 {tool} 呼叫",
        "allows_server": "MCP 伺服器 {server} 的所有工具",
    }
)


# ---- the sandbox and the network of commands (meowgent.tools.sandbox; the card, the status line, the list) ----
_TEXT[ENGLISH].update(
    {
        "sandbox_missing": "⚠️ Commands run without a sandbox on this computer: they can change any of your files "
        "and reach the network. `The sandbox` in the README says how to get one.",
        "sandbox_off": "⚠️ Commands run without a sandbox: it was turned off with `--no-sandbox`.",
        "card_no_sandbox": "⚠️ Commands run without a sandbox on this computer.",
        "network_label": "Network",
        "network_off": "No network for this command",
        "network_command": "Network on for this command",
        "network_chat": "Network on for this chat",
        "network_needed": "🌐 This command uses the network, so it will fail without it: turn the network on below, "
        "for this command or for this chat.",
        "allows_network": "Network for commands",
        "audit_network": "Network",
        "audit_network_on": "on",
        "audit_network_off": "off",
    }
)
# ---- what the card shows of long or misleading text (meowgent.ui.approval, meowgent.ui.render) ----
_TEXT[ENGLISH].update(
    {
        "diff_rough": "This change is too big to compare line by line, so all of its old lines show as removed "
        "and all of its new lines as added, even lines that stay the same.",
        "through_link": "⚠️ {path} is a link to another file: this changes {target}.",
        "card_many_hint_cut": "“Approve” decides the first one alone. Some of them are too long to show here in "
        "full, so each one waits for its own approval, where it shows whole.",
        "approve_all_cut": "Some of these requests are too long to show on the card in full, so approve them one "
        "at a time. Nothing was run.",
    }
)
_TEXT[CHINESE].update(
    {
        "sandbox_missing": "⚠️ 這台電腦上的指令沒有在沙箱中執行：它們能修改你所有的檔案，也能連上網路。"
        "README 的 `The sandbox` 一節說明如何取得沙箱。",
        "sandbox_off": "⚠️ 指令沒有在沙箱中執行：沙箱已用 `--no-sandbox` 關閉。",
        "card_no_sandbox": "⚠️ 這台電腦上的指令沒有在沙箱中執行。",
        "network_label": "網路",
        "network_off": "這個指令不連網路",
        "network_command": "這個指令可以連網路",
        "network_chat": "此對話中的指令都可以連網路",
        "network_needed": "🌐 這個指令會連上網路，沒有網路就會失敗：請在下方為這個指令或此對話開啟網路。",
        "allows_network": "指令連網路",
        "audit_network": "網路",
        "audit_network_on": "開啟",
        "audit_network_off": "關閉",
        "diff_rough": "這個修改太大，無法逐行比對，所以舊的每一行都列為刪除、新的每一行都列為新增，"
        "即使有些行其實沒有變。",
        "through_link": "⚠️ {path} 是指向另一個檔案的連結：實際改動的是 {target}。",
        "card_many_hint_cut": "「核准」只決定第一個動作。其中有些內容太長，這裡無法完整顯示，所以每個動作都要各自核准，"
        "輪到它時會完整顯示。",
        "approve_all_cut": "其中有些請求太長，卡片上無法完整顯示，請一次核准一個。沒有執行任何動作。",
    }
)
