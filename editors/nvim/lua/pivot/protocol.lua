-- editors/nvim/lua/pivot/protocol.lua: generated from editors/schema/commands.schema.json (the server's types); do not edit. Regenerate: PIVOT_UPDATE_SCHEMA=1 cargo test -p pivot-lsp --lib client_types
---@meta

--- `pivot.conversation.open`: arguments.
---@alias pivot.ConversationOpenArgs { path: string, task?: string | nil, config?: string | nil, model?: string | nil, player?: string | nil, simulator?: string | nil }

--- `pivot.conversation.open`: reply.
---@alias pivot.ConversationOpenReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil, warnings: string[] }

--- `pivot.conversation.close`: arguments.
---@alias pivot.ConversationCloseArgs table<string, any>

--- `pivot.conversation.close`: reply.
---@alias pivot.ConversationCloseReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil }

--- `pivot.conversation.info`: arguments.
---@alias pivot.ConversationInfoArgs table<string, any>

--- `pivot.conversation.info`: reply.
---@alias pivot.ConversationInfoReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil }

--- `pivot.session.next`: arguments.
---@alias pivot.SessionNextArgs table<string, any>

--- `pivot.session.next`: reply.
---@alias pivot.SessionNextReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil, moved: boolean }

--- `pivot.session.previous`: arguments.
---@alias pivot.SessionPreviousArgs table<string, any>

--- `pivot.session.previous`: reply.
---@alias pivot.SessionPreviousReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil, moved: boolean }

--- `pivot.session.goto`: arguments.
---@alias pivot.SessionGotoArgs { index: integer }

--- `pivot.session.goto`: reply.
---@alias pivot.SessionGotoReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil, moved: boolean }

--- `pivot.session.transcript`: arguments.
---@alias pivot.SessionTranscriptArgs { index?: integer | nil }

--- `pivot.session.transcript`: reply.
---@alias pivot.SessionTranscriptReply { index: integer, count: integer, markdown: string }

--- `pivot.session.timeline`: arguments.
---@alias pivot.SessionTimelineArgs table<string, any>

--- `pivot.session.timeline`: reply.
---@alias pivot.SessionTimelineReply { index: integer, count: integer, source: 'memorycode' | 'convcode' | 'workspace pivots' | 'history', file: string | nil, sessions: ({ index: integer, commit: { id: string, short: string, summary: string, time: integer } | nil, uncommitted: boolean, changes: ({ change: 'added' | 'updated' | 'removed', id: string, origin: string, version: integer, text: string, kind: string, description: string })[] })[] }

--- `pivot.pivots.active`: arguments.
---@alias pivot.PivotsActiveArgs table<string, any>

--- `pivot.pivots.active`: reply.
---@alias pivot.PivotsActiveReply { index: integer, count: integer, pivots: ({ id: string, origin: string, version: integer, text: string, kind: string, rule: any, description: string, session: integer })[] }

--- `pivot.pivots.add`: arguments.
---@alias pivot.PivotsAddArgs { id: string, kind: string, rule: any, text?: string | nil, session?: integer | nil }

--- `pivot.pivots.add`: reply.
---@alias pivot.PivotsAddReply { index: integer, count: integer, pivots: ({ id: string, origin: string, version: integer, text: string, kind: string, rule: any, description: string, session: integer })[] }

--- `pivot.pivots.remove`: arguments.
---@alias pivot.PivotsRemoveArgs { id: string }

--- `pivot.pivots.remove`: reply.
---@alias pivot.PivotsRemoveReply { index: integer, count: integer, pivots: ({ id: string, origin: string, version: integer, text: string, kind: string, rule: any, description: string, session: integer })[] }

--- `pivot.pivots.reload`: arguments.
---@alias pivot.PivotsReloadArgs table<string, any>

--- `pivot.pivots.reload`: reply.
---@alias pivot.PivotsReloadReply { source: string | nil, kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none', count: integer, index: integer, active: integer, pivots: integer, history: boolean, convcode?: { task: string, config: string, label: string, model: string, simulator: string, turns: integer[], turn: integer | nil, next_turn: integer | nil, notes: string[], pending: { compilation: string | nil, execution: string | nil, user: string | nil } } | nil, workspace_pivots: integer }

--- `pivot.outputs.check`: arguments.
---@alias pivot.OutputsCheckArgs { path: string }

--- `pivot.outputs.check`: reply.
---@alias pivot.OutputsCheckReply { dialogue: string, output: string, scores: { session: (number | nil)[], instruction: (number | nil)[], history: (number | nil)[] }, answers: ({ session: integer, kind: string, answer: integer, syntax_error: string | nil, score: number | nil, verdicts: ({ pair: integer, pivot: string | nil, kind: string, rule: any, verdict: 'pass' | 'fail' | 'absent' | 'syntax_error', score: number | nil })[] })[], warnings: string[] }

--- `pivot.evaluate.memorycode`: arguments.
---@alias pivot.EvaluateMemorycodeArgs { dataset: string, outputs: string }

--- `pivot.evaluate.memorycode`: reply.
---@alias pivot.EvaluateMemorycodeReply { benchmark: string, model: string, round?: integer | nil, feedback?: { round: integer, outputs: string, answers: integer, broken: integer, reasked: integer, fixed: integer, kept_broken: integer, broken_anew: integer, unanswered: integer } | nil, macro: { ["short history"]: number | nil, ["long history"]: number | nil, session: number | nil, instruction: number | nil }, per_session: { ["short history"]: (number | nil)[], ["long history"]: (number | nil)[], session: (number | nil)[], instruction: (number | nil)[] }, max_length: integer, dialogues: table<string, { history: (number | nil)[], session: (number | nil)[], instruction: (number | nil)[], instructions_chain?: (number | nil)[], rag?: (number | nil)[] }>, listdir_order: string[], skipped: ({ id: integer, reason: string })[], warnings?: string[] | nil, by_kind: table<string, { mean: number | nil, count: integer, absent: integer }>, modes?: table<string, { output_key: string, scored_as: string, macro: { ["short history"]: number | nil, ["long history"]: number | nil }, per_session: { ["short history"]: (number | nil)[], ["long history"]: (number | nil)[] }, dialogues: integer }>, shard?: { k: integer, n: integer, input: { benchmark: string, model: string, dialogue_ids: integer[] }, complete: boolean, totals?: { answers: integer, scorings: integer, by_kind_sum: table<string, number> } | nil } | nil }

--- `pivot.document.inspect`: arguments.
---@alias pivot.DocumentInspectArgs { uri: string }

--- `pivot.document.inspect`: reply.
---@alias pivot.DocumentInspectReply { uri: string, version: integer, text: string, lines: integer, syntax_error: string | nil }

--- `pivot.tests.run`: arguments.
---@alias pivot.TestsRunArgs { uri: string, task?: string | nil }

--- `pivot.tests.run`: reply.
---@alias pivot.TestsRunReply { uri: string, task: string, status: 'pass' | 'fail' | 'timeout' | 'tampered', summary: string, passed: integer, total: integer, entry_line: integer | nil, failures: ({ test: string, line: integer, message: string, test_line: string | nil, traceback: string, in_document: boolean })[] }

--- `pivot.turn.feedback`: arguments.
---@alias pivot.TurnFeedbackArgs { uri: string, kind: string, task?: string | nil }

--- `pivot.turn.feedback`: reply.
---@alias pivot.TurnFeedbackReply { kind: 'compilation' | 'execution' | 'execution-partial' | 'novice' | 'expert', task: string, text: string | nil, simulator_call: string | nil, pending: { compilation: string | nil, execution: string | nil, user: string | nil } | nil }

--- `pivot.turn.submit`: arguments.
---@alias pivot.TurnSubmitArgs { uri: string }

--- `pivot.turn.submit`: reply.
---@alias pivot.TurnSubmitReply { turn: integer, record: table<string, any>, log: string, eval_file: string, tests: { uri: string, task: string, status: 'pass' | 'fail' | 'timeout' | 'tampered', summary: string, passed: integer, total: integer, entry_line: integer | nil, failures: ({ test: string, line: integer, message: string, test_line: string | nil, traceback: string, in_document: boolean })[] }, scores: { benchmark: 'convcodeworld' | 'convcodebench', mode: 'live' | 'static', model: string, reference: string | nil, turns: integer[], columns: ({ config: string, label: string, complete: boolean, pass_at_1: (number | nil)[], mrr: number | nil, recall: number | nil })[], excluded_tasks: string[], notes: string[], turn0?: { reference_pass_at_1: number, model_pass_at_1: number } | nil, shard?: { k: integer, n: integer } | nil }, table: string }

--- `pivot.memorycode.generate`: arguments.
---@alias pivot.MemorycodeGenerateArgs { model: string, out: string, baseUrl?: string | nil, loopback?: string | nil, modes?: string[] | nil, topics?: string | nil, apiKeyEnv?: string | nil, rerankerUrl?: string | nil, temperature?: number | nil }

--- `pivot.memorycode.generate`: reply.
---@alias pivot.MemorycodeGenerateReply { output: string, requests: integer, cached: integer, written: string[], failures: string[] }

--- `pivot.evaluate.convcode`: arguments.
---@alias pivot.EvaluateConvcodeArgs { results: string, model: string, static?: boolean, refModel?: string | nil, simulator?: string | nil, excludeInitSolved?: boolean }

--- `pivot.evaluate.convcode`: reply.
---@alias pivot.EvaluateConvcodeReply { text: string, markdown: string, json: { benchmark: 'convcodeworld' | 'convcodebench', mode: 'live' | 'static', model: string, reference: string | nil, turns: integer[], columns: ({ config: string, label: string, complete: boolean, pass_at_1: (number | nil)[], mrr: number | nil, recall: number | nil })[], excluded_tasks: string[], notes: string[], turn0?: { reference_pass_at_1: number, model_pass_at_1: number } | nil, shard?: { k: integer, n: integer } | nil }, notes: string[] }

--- `pivot.report.open`: arguments.
---@alias pivot.ReportOpenArgs { inputs: string[], title?: string | nil }

--- `pivot.report.open`: reply.
---@alias pivot.ReportOpenReply { path: string, inputs: integer }

--- `pivot/headless/setup`: arguments.
---@alias pivot.HeadlessSetupArgs { pivots?: string | nil, conversation?: string | nil, session?: integer | nil }

--- `pivot/headless/setup`: reply.
---@alias pivot.HeadlessSetupReply { index: integer, count: integer, pivots: ({ id: string, origin: string, version: integer, text: string, kind: string, rule: any, description: string, session: integer })[], errors: string[], warnings: string[] }

--- `pivot/memorycode/answers`: arguments.
---@alias pivot.MemorycodeAnswersArgs { answers: ({ text: string, kind: string, answer: integer })[] }

--- `pivot/memorycode/answers`: reply.
---@alias pivot.MemorycodeAnswersReply { session: integer, results: ({ syntax_error: string | nil, verdicts: ((integer|'pass' | 'fail' | 'absent' | 'syntax_error')[])[] })[] }

--- The settings object the server reads (`initializationOptions.pivot`).
---@alias pivot.ServerSettings { python?: string | nil, problems?: string | nil, testTimeout?: number | nil, sandbox?: 'bwrap' | 'none' | nil, history?: boolean | nil, instructions?: string | nil, severity?: string | nil, logLevel?: string | nil, simulator?: { baseUrl?: string | nil, model?: string | nil, apiKey?: string | nil, endpoint?: string | nil } | nil, endpoint?: { baseUrl?: string | nil, model?: string | nil, apiKey?: string | nil, endpoint?: string | nil } | nil }

return {}
