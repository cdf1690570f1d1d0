// editors/vscode/src/protocol.ts: generated from editors/schema/commands.schema.json (the server's types); do not edit. Regenerate: PIVOT_UPDATE_SCHEMA=1 cargo test -p pivot-lsp --lib client_types

/** `pivot.conversation.open`: arguments. */
export type ConversationOpenArgs = {
  path: string;
  task?: string | null;
  config?: string | null;
  model?: string | null;
  player?: string | null;
  simulator?: string | null;
};

/** `pivot.conversation.open`: reply. */
export type ConversationOpenReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
  warnings: string[];
};

/** `pivot.conversation.close`: arguments. */
export type ConversationCloseArgs = Record<string, unknown>;

/** `pivot.conversation.close`: reply. */
export type ConversationCloseReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
};

/** `pivot.conversation.info`: arguments. */
export type ConversationInfoArgs = Record<string, unknown>;

/** `pivot.conversation.info`: reply. */
export type ConversationInfoReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
};

/** `pivot.session.next`: arguments. */
export type SessionNextArgs = Record<string, unknown>;

/** `pivot.session.next`: reply. */
export type SessionNextReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
  /**
   * Whether the session changed (a step past either end does not).
   */
  moved: boolean;
};

/** `pivot.session.previous`: arguments. */
export type SessionPreviousArgs = Record<string, unknown>;

/** `pivot.session.previous`: reply. */
export type SessionPreviousReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
  /**
   * Whether the session changed (a step past either end does not).
   */
  moved: boolean;
};

/** `pivot.session.goto`: arguments. */
export type SessionGotoArgs = {
  /**
   * 0-based.
   */
  index: number;
};

/** `pivot.session.goto`: reply. */
export type SessionGotoReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
  /**
   * Whether the session changed (a step past either end does not).
   */
  moved: boolean;
};

/** `pivot.session.transcript`: arguments. */
export type SessionTranscriptArgs = {
  /**
   * 0-based; the current session when absent.
   */
  index?: number | null;
};

/** `pivot.session.transcript`: reply. */
export type SessionTranscriptReply = {
  index: number;
  count: number;
  markdown: string;
};

/** `pivot.session.timeline`: arguments. */
export type SessionTimelineArgs = Record<string, unknown>;

/** `pivot.session.timeline`: reply. */
export type SessionTimelineReply = {
  /**
   * The current session.
   */
  index: number;
  count: number;
  /**
   * Where the sessions come from.
   */
  source: 'memorycode' | 'convcode' | 'workspace pivots' | 'history';
  /**
   * The file whose commits the sessions are (source `history`: `pivots.toml`, or the
   * `instructions` setting's file); null for every other source.
   */
  file: string | null;
  sessions: ({
    index: number;
    /**
     * The commit this session is (history only; null for the uncommitted working file and
     * every other source).
     */
    commit: {
      /**
       * The full hex id.
       */
      id: string;
      /**
       * The first 12 hex digits.
       */
      short: string;
      /**
       * The first line of its message.
       */
      summary: string;
      /**
       * Committer time, seconds since the epoch.
       */
      time: number;
    } | null;
    /**
     * True for the working tree's `pivots.toml`, changed since the last commit.
     */
    uncommitted: boolean;
    changes: ({
      change: 'added' | 'updated' | 'removed';
      id: string;
      /**
       * "memorycode", "pivots.toml" or "user".
       */
      origin: string;
      version: number;
      /**
       * The instruction (for a removal, the one taken out).
       */
      text: string;
      kind: string;
      /**
       * The rule in words.
       */
      description: string;
    })[];
  })[];
};

/** `pivot.pivots.active`: arguments. */
export type PivotsActiveArgs = Record<string, unknown>;

/** `pivot.pivots.active`: reply. */
export type PivotsActiveReply = {
  index: number;
  count: number;
  pivots: ({
    id: string;
    /**
     * "memorycode", "pivots.toml" or "user".
     */
    origin: string;
    version: number;
    /**
     * The instruction.
     */
    text: string;
    /**
     * The object kind the rule applies to ("function", "class", ...).
     */
    kind: string;
    /**
     * The rule in its JSON form (the core's `Rule::to_json`).
     */
    rule: unknown;
    /**
     * The rule in words.
     */
    description: string;
    /**
     * The session this version was given at.
     */
    session: number;
  })[];
};

/** `pivot.pivots.add`: arguments. */
export type PivotsAddArgs = {
  id: string;
  kind: string;
  /**
   * A rule in its JSON form (`Rule::from_json`).
   */
  rule: unknown;
  text?: string | null;
  session?: number | null;
};

/** `pivot.pivots.add`: reply. */
export type PivotsAddReply = {
  index: number;
  count: number;
  pivots: ({
    id: string;
    /**
     * "memorycode", "pivots.toml" or "user".
     */
    origin: string;
    version: number;
    /**
     * The instruction.
     */
    text: string;
    /**
     * The object kind the rule applies to ("function", "class", ...).
     */
    kind: string;
    /**
     * The rule in its JSON form (the core's `Rule::to_json`).
     */
    rule: unknown;
    /**
     * The rule in words.
     */
    description: string;
    /**
     * The session this version was given at.
     */
    session: number;
  })[];
};

/** `pivot.pivots.remove`: arguments. */
export type PivotsRemoveArgs = {
  id: string;
};

/** `pivot.pivots.remove`: reply. */
export type PivotsRemoveReply = {
  index: number;
  count: number;
  pivots: ({
    id: string;
    /**
     * "memorycode", "pivots.toml" or "user".
     */
    origin: string;
    version: number;
    /**
     * The instruction.
     */
    text: string;
    /**
     * The object kind the rule applies to ("function", "class", ...).
     */
    kind: string;
    /**
     * The rule in its JSON form (the core's `Rule::to_json`).
     */
    rule: unknown;
    /**
     * The rule in words.
     */
    description: string;
    /**
     * The session this version was given at.
     */
    session: number;
  })[];
};

/** `pivot.pivots.reload`: arguments. */
export type PivotsReloadArgs = Record<string, unknown>;

/** `pivot.pivots.reload`: reply. */
export type PivotsReloadReply = {
  /**
   * The dialogue file or the results folder; null without a conversation.
   */
  source: string | null;
  /**
   * Where the sessions come from.
   */
  kind: 'memorycode' | 'convcode' | 'workspace pivots' | 'none';
  /**
   * Sessions (ConvCodeWorld: turns).
   */
  count: number;
  /**
   * The current session, 0-based.
   */
  index: number;
  /**
   * Pivots in force at the current session.
   */
  active: number;
  /**
   * Pivots of every source, in force or not.
   */
  pivots: number;
  /**
   * Whether the sessions are pivots.toml's commits (the history setting).
   */
  history: boolean;
  /**
   * Only with a ConvCodeWorld conversation open.
   */
  convcode?: {
    task: string;
    /**
     * The configuration's code (e.g. "ce_ef_ver").
     */
    config: string;
    label: string;
    model: string;
    simulator: string;
    /**
     * The turn numbers recorded.
     */
    turns: number[];
    /**
     * The current session's turn.
     */
    turn: number | null;
    /**
     * The turn a submission would record; null when the run is complete.
     */
    next_turn: number | null;
    notes: string[];
    /**
     * Feedback given since the last submission, per slot of the next turn's record.
     */
    pending: {
      compilation: string | null;
      execution: string | null;
      user: string | null;
    };
  } | null;
  /**
   * The pivots pivots.toml names.
   */
  workspace_pivots: number;
};

/** `pivot.outputs.check`: arguments. */
export type OutputsCheckArgs = {
  path: string;
};

/** `pivot.outputs.check`: reply. */
export type OutputsCheckReply = {
  dialogue: string;
  output: string;
  /**
   * Per session, the mean score of each kind of answer (null: nothing to score).
   */
  scores: {
    session: (number | null)[];
    instruction: (number | null)[];
    history: (number | null)[];
  };
  answers: ({
    session: number;
    /**
     * "session", "instruction" or "history"; "instructions_chain" or "rag" for answers of
     * those outputs (scored on the history pairs).
     */
    kind: string;
    answer: number;
    syntax_error: string | null;
    /**
     * The mean of the pairs' scores; null when no pair counts.
     */
    score: number | null;
    verdicts: ({
      /**
       * The pair's index in the session's list.
       */
      pair: number;
      /**
       * The pivot whose version in force is this pair, if any.
       */
      pivot: string | null;
      kind: string;
      rule: unknown;
      /**
       * A pivot's verdict on some code, as the core's `Verdict` writes it.
       */
      verdict: 'pass' | 'fail' | 'absent' | 'syntax_error';
      /**
       * 1, 0, or null (an absent object does not count).
       */
      score: number | null;
    })[];
  })[];
  warnings: string[];
};

/** `pivot.evaluate.memorycode`: arguments. */
export type EvaluateMemorycodeArgs = {
  dataset: string;
  outputs: string;
};

/** `pivot.evaluate.memorycode`: reply. */
export type EvaluateMemorycodeReply = {
  benchmark: string;
  model: string;
  /**
   * The feedback round of `memorycode generate --feedback` the outputs are (round r's
   * folder is `OUT/feedback/round-r/<model>`); absent for round 0 and any other folder.
   */
  round?: number | null;
  /**
   * That round's counts from `OUT/feedback/<model>.json`, when it is there.
   */
  feedback?: {
    round: number;
    /**
     * The round's outputs folder, relative to `--out`, `/`-separated.
     */
    outputs: string;
    /**
     * Answers there are after this round (an answer whose request failed has none).
     */
    answers: number;
    /**
     * Of those, answers whose code has findings (a broken pivot or a syntax error).
     */
    broken: number;
    /**
     * Answers of the round before with findings, asked again in this round (0 in round 0).
     */
    reasked: number;
    /**
     * Re-asked answers whose new code has no findings.
     */
    fixed: number;
    /**
     * Re-asked answers whose new code still breaks some of what it broke, and nothing else.
     */
    kept_broken: number;
    /**
     * Re-asked answers whose new code breaks something the previous one did not.
     */
    broken_anew: number;
    /**
     * Re-asked answers that got no answer (a failed request; offline, not in the cache).
     */
    unanswered: number;
  } | null;
  /**
   * One value per metric, in [`METRICS`]' order and with its names.
   */
  macro: {
    /**
     * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
     * reference dump writes it.
     */
    'short history': number | null;
    /**
     * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
     * reference dump writes it.
     */
    'long history': number | null;
    /**
     * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
     * reference dump writes it.
     */
    session: number | null;
    /**
     * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
     * reference dump writes it.
     */
    instruction: number | null;
  };
  /**
   * One value per metric, in [`METRICS`]' order and with its names.
   */
  per_session: {
    'short history': (number | null)[];
    'long history': (number | null)[];
    session: (number | null)[];
    instruction: (number | null)[];
  };
  max_length: number;
  /**
   * By dialogue id (numeric order; the keys are the ids as text).
   */
  dialogues: Record<string, {
    history: (number | null)[];
    session: (number | null)[];
    instruction: (number | null)[];
    /**
     * The History scorer on `instructions_only_model_output` / `rag_model_output`; absent
     * when the output has no such key.
     */
    instructions_chain?: (number | null)[];
    rag?: (number | null)[];
  }>;
  /**
   * The outputs folder's listing order (`os.listdir`), which decides numpy's summation
   * order and so the last bit of the per-session means.
   */
  listdir_order: string[];
  skipped: ({
    id: number;
    reason: string;
  })[];
  warnings?: string[] | null;
  by_kind: Record<string, {
    /**
     * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
     * reference dump writes it.
     */
    mean: number | null;
    count: number;
    /**
     * Answers whose pivot's object was absent (no score); absent in older files.
     */
    absent: number;
  }>;
  /**
   * Instructions chain and RAG, by name (`"instructions chain"`, `"rag"`), when the
   * outputs have them; absent otherwise (and in files written before they were scored).
   */
  modes?: Record<string, {
    /**
     * The output key its answers are read from.
     */
    output_key: string;
    /**
     * Always `"history"`: which of the original's scorers scored the answers.
     */
    scored_as: string;
    /**
     * History's two scores, by the reference dump's names.
     */
    macro: {
      /**
       * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
       * reference dump writes it.
       */
      'short history': number | null;
      /**
       * A score that may be missing: NaN in memory (numpy's `nan`), `null` in the file, as the
       * reference dump writes it.
       */
      'long history': number | null;
    };
    /**
     * History's two scores, by the reference dump's names.
     */
    per_session: {
      'short history': (number | null)[];
      'long history': (number | null)[];
    };
    /**
     * Dialogues with a score in this mode.
     */
    dialogues: number;
  }>;
  /**
   * The `"shard"` key of a shard's output. `I` is what every shard of the run must share
   * (each benchmark's own type); `T`, counts a merge sums that the output does not carry.
   */
  shard?: {
    k: number;
    n: number;
    /**
     * What every shard of one run shares: the dataset's dialogues and the model.
     */
    input: {
      benchmark: string;
      model: string;
      dialogue_ids: number[];
    };
    /**
     * False while the run is going, and for good when it was killed or failed.
     */
    complete: boolean;
    /**
     * The counts the scores do not carry, summed by the merge.
     */
    totals?: {
      answers: number;
      scorings: number;
      /**
       * Per object kind, the sum of its scored answers (the mean alone loses it).
       */
      by_kind_sum: Record<string, number>;
    } | null;
  } | null;
};

/** `pivot.document.inspect`: arguments. */
export type DocumentInspectArgs = {
  uri: string;
};

/** `pivot.document.inspect`: reply. */
export type DocumentInspectReply = {
  uri: string;
  version: number;
  /**
   * The text as the client's edits left it.
   */
  text: string;
  lines: number;
  syntax_error: string | null;
};

/** `pivot.tests.run`: arguments. */
export type TestsRunArgs = {
  uri: string;
  task?: string | null;
};

/** `pivot.tests.run`: reply. */
export type TestsRunReply = {
  uri: string;
  task: string;
  /**
   * A test run's outcome, as the core's `Status` writes it.
   */
  status: 'pass' | 'fail' | 'timeout' | 'tampered';
  /**
   * "3/7 passed", "timed out", ...
   */
  summary: string;
  passed: number;
  total: number;
  /**
   * 0-based line of the entry point's `def`, when the document has it.
   */
  entry_line: number | null;
  failures: ({
    /**
     * The test method (`test_case_2`), `ALL` for a module-level crash, or `timeout`.
     */
    test: string;
    /**
     * 0-based line of the document.
     */
    line: number;
    message: string;
    /**
     * The test's own failing source line, when the traceback names it.
     */
    test_line: string | null;
    traceback: string;
    /**
     * Whether `line` is in a frame of the document (else it is the entry point's).
     */
    in_document: boolean;
  })[];
};

/** `pivot.turn.feedback`: arguments. */
export type TurnFeedbackArgs = {
  uri: string;
  /**
   * A [`FeedbackKind`] name.
   */
  kind: string;
  task?: string | null;
};

/** `pivot.turn.feedback`: reply. */
export type TurnFeedbackReply = {
  /**
   * A kind of feedback, as the core's `FeedbackKind` writes it.
   */
  kind: 'compilation' | 'execution' | 'execution-partial' | 'novice' | 'expert';
  task: string;
  /**
   * Null when the kind gives none here (e.g. verbal feedback the configuration omits).
   */
  text: string | null;
  /**
   * The simulator prompt used, for verbal feedback.
   */
  simulator_call: string | null;
  /**
   * The open conversation's feedback since its last submission (null when the task is
   * not the open conversation's).
   */
  pending: {
    compilation: string | null;
    execution: string | null;
    user: string | null;
  } | null;
};

/** `pivot.turn.submit`: arguments. */
export type TurnSubmitArgs = {
  uri: string;
};

/** `pivot.turn.submit`: reply. */
export type TurnSubmitReply = {
  turn: number;
  /**
   * The turn's record as written to the results folder (the core's format).
   */
  record: Record<string, unknown>;
  log: string;
  eval_file: string;
  /**
   * `pivot.tests.run`, and the tests part of `pivot.turn.submit`.
   */
  tests: {
    uri: string;
    task: string;
    /**
     * A test run's outcome, as the core's `Status` writes it.
     */
    status: 'pass' | 'fail' | 'timeout' | 'tampered';
    /**
     * "3/7 passed", "timed out", ...
     */
    summary: string;
    passed: number;
    total: number;
    /**
     * 0-based line of the entry point's `def`, when the document has it.
     */
    entry_line: number | null;
    failures: ({
      /**
       * The test method (`test_case_2`), `ALL` for a module-level crash, or `timeout`.
       */
      test: string;
      /**
       * 0-based line of the document.
       */
      line: number;
      message: string;
      /**
       * The test's own failing source line, when the traceback names it.
       */
      test_line: string | null;
      traceback: string;
      /**
       * Whether `line` is in a frame of the document (else it is the entry point's).
       */
      in_document: boolean;
    })[];
  };
  /**
   * The run's rescored tables: the score file `score convcode --format json` prints.
   */
  scores: {
    /**
     * First in the file, so a reader knows the format before it reads the rest; always
     * the one `mode` implies (a file where it is not is refused).
     */
    benchmark: 'convcodeworld' | 'convcodebench';
    /**
     * Live (ConvCodeWorld) or static (ConvCodeBench against a reference model).
     */
    mode: 'live' | 'static';
    model: string;
    reference: string | null;
    /**
     * Table 1 row labels (turns).
     */
    turns: number[];
    columns: ({
      config: string;
      label: string;
      /**
       * All eval files were there, so the numbers are computed from the run itself.
       */
      complete: boolean;
      /**
       * One value per row of Table 1 (`None` prints as a blank cell).
       */
      pass_at_1: (number | null)[];
      /**
       * `None`: the configuration is left out of Table 2.
       */
      mrr: number | null;
      recall: number | null;
    })[];
    /**
     * Tasks left out of MRR and Recall by `exclude_init_solved`.
     */
    excluded_tasks: string[];
    /**
     * Non-fatal findings (unreadable files, dropped configurations, unneeded missing files).
     */
    notes: string[];
    /**
     * ConvCodeBench only: the turn-0 Pass@1 its Table 1 leaves out (the original prints
     * turns 1-10), for the report's turn-0 point; absent from live scores, whose turn 0 is
     * Table 1's first row.
     */
    turn0?: {
      /**
       * The reference model's turn 0: the code every replayed conversation starts from, so
       * the static Pass@1 formula (s_t or r_0) at t = 0.
       */
      reference_pass_at_1: number;
      /**
       * The target model's own turn 0 (which MRR and Recall count at rank 0).
       */
      model_pass_at_1: number;
    } | null;
    /**
     * The results folder is shard k of n (its `pivot-shard.json`): these scores cover only
     * that shard's tasks, and `notes` says how to get the whole run's.
     */
    shard?: {
      k: number;
      n: number;
    } | null;
  };
  /**
   * The tables as text.
   */
  table: string;
};

/** `pivot.memorycode.generate`: arguments. */
export type MemorycodeGenerateArgs = {
  model: string;
  out: string;
  /**
   * An OpenAI-compatible endpoint, or else:
   */
  baseUrl?: string | null;
  /**
   * a script for the bundled loopback model.
   */
  loopback?: string | null;
  /**
   * Mode names; all three when absent.
   */
  modes?: string[] | null;
  topics?: string | null;
  apiKeyEnv?: string | null;
  rerankerUrl?: string | null;
  temperature?: number | null;
};

/** `pivot.memorycode.generate`: reply. */
export type MemorycodeGenerateReply = {
  /**
   * The output file `pivot.outputs.check` scores.
   */
  output: string;
  requests: number;
  cached: number;
  written: string[];
  failures: string[];
};

/** `pivot.evaluate.convcode`: arguments. */
export type EvaluateConvcodeArgs = {
  results: string;
  model: string;
  static?: boolean;
  refModel?: string | null;
  simulator?: string | null;
  excludeInitSolved?: boolean;
};

/** `pivot.evaluate.convcode`: reply. */
export type EvaluateConvcodeReply = {
  text: string;
  markdown: string;
  /**
   * The score file `score convcode --format json` prints (`"shard"` included).
   */
  json: {
    /**
     * First in the file, so a reader knows the format before it reads the rest; always
     * the one `mode` implies (a file where it is not is refused).
     */
    benchmark: 'convcodeworld' | 'convcodebench';
    /**
     * Live (ConvCodeWorld) or static (ConvCodeBench against a reference model).
     */
    mode: 'live' | 'static';
    model: string;
    reference: string | null;
    /**
     * Table 1 row labels (turns).
     */
    turns: number[];
    columns: ({
      config: string;
      label: string;
      /**
       * All eval files were there, so the numbers are computed from the run itself.
       */
      complete: boolean;
      /**
       * One value per row of Table 1 (`None` prints as a blank cell).
       */
      pass_at_1: (number | null)[];
      /**
       * `None`: the configuration is left out of Table 2.
       */
      mrr: number | null;
      recall: number | null;
    })[];
    /**
     * Tasks left out of MRR and Recall by `exclude_init_solved`.
     */
    excluded_tasks: string[];
    /**
     * Non-fatal findings (unreadable files, dropped configurations, unneeded missing files).
     */
    notes: string[];
    /**
     * ConvCodeBench only: the turn-0 Pass@1 its Table 1 leaves out (the original prints
     * turns 1-10), for the report's turn-0 point; absent from live scores, whose turn 0 is
     * Table 1's first row.
     */
    turn0?: {
      /**
       * The reference model's turn 0: the code every replayed conversation starts from, so
       * the static Pass@1 formula (s_t or r_0) at t = 0.
       */
      reference_pass_at_1: number;
      /**
       * The target model's own turn 0 (which MRR and Recall count at rank 0).
       */
      model_pass_at_1: number;
    } | null;
    /**
     * The results folder is shard k of n (its `pivot-shard.json`): these scores cover only
     * that shard's tasks, and `notes` says how to get the whole run's.
     */
    shard?: {
      k: number;
      n: number;
    } | null;
  };
  notes: string[];
};

/** `pivot.report.open`: arguments. */
export type ReportOpenArgs = {
  /**
   * Score files (`score ... --format json`).
   */
  inputs: string[];
  title?: string | null;
};

/** `pivot.report.open`: reply. */
export type ReportOpenReply = {
  /**
   * The report page written (`.pivot/report.html`).
   */
  path: string;
  /**
   * How many score files it shows.
   */
  inputs: number;
};

/** `pivot/headless/setup`: arguments. */
export type HeadlessSetupArgs = {
  pivots?: string | null;
  conversation?: string | null;
  session?: number | null;
};

/** `pivot/headless/setup`: reply. */
export type HeadlessSetupReply = {
  index: number;
  count: number;
  pivots: ({
    id: string;
    /**
     * "memorycode", "pivots.toml" or "user".
     */
    origin: string;
    version: number;
    /**
     * The instruction.
     */
    text: string;
    /**
     * The object kind the rule applies to ("function", "class", ...).
     */
    kind: string;
    /**
     * The rule in its JSON form (the core's `Rule::to_json`).
     */
    rule: unknown;
    /**
     * The rule in words.
     */
    description: string;
    /**
     * The session this version was given at.
     */
    session: number;
  })[];
  /**
   * A bad pivots.toml (its pivots are then none; the other sources still apply).
   */
  errors: string[];
  warnings: string[];
};

/** `pivot/memorycode/answers`: arguments. */
export type MemorycodeAnswersArgs = {
  answers: ({
    /**
     * The answer's code (may be empty: a reply without code).
     */
    text: string;
    /**
     * `session`, `instruction` or `history`.
     */
    kind: string;
    answer: number;
  })[];
};

/** `pivot/memorycode/answers`: reply. */
export type MemorycodeAnswersReply = {
  /**
   * The session the answers were checked at.
   */
  session: number;
  results: ({
    syntax_error: string | null;
    /**
     * (pair index in the session's list, verdict) per pair the benchmark scores.
     */
    verdicts: ([number, 'pass' | 'fail' | 'absent' | 'syntax_error'])[];
  })[];
};

/** The settings object the server reads (`initializationOptions.pivot`). */
export type ServerSettings = {
  /**
   * The interpreter that runs the tests (a venv's python works); default `PIVOT_PYTHON`,
   * else `python3`.
   */
  python?: string | null;
  /**
   * `humaneval` (found through `python`) or a BigCodeBench / HumanEval JSONL file,
   * relative to the workspace root.
   */
  problems?: string | null;
  /**
   * Wall time of one test run, in seconds.
   */
  testTimeout?: number | null;
  /**
   * How model code is contained: `bwrap` (the default) or `none` (unconfined).
   */
  sandbox?: 'bwrap' | 'none' | null;
  /**
   * pivots.toml's sessions are the commits that changed it.
   */
  history?: boolean | null;
  /**
   * An instruction file (`AGENTS.md`, ...) relative to the root, read in place of
   * pivots.toml; `""` reads pivots.toml again.
   */
  instructions?: string | null;
  /**
   * The severity pivot findings are published with: `error`, `warning` (the default) or
   * `information`, in any case.
   */
  severity?: string | null;
  /**
   * The server's log on stderr: `error`, `warn`, `info`, `debug`, `trace` or `off`.
   */
  logLevel?: string | null;
  /**
   * The feedback simulator's endpoint; `null` removes it.
   */
  simulator?: {
    baseUrl?: string | null;
    model?: string | null;
    /**
     * Else `OPENAI_API_KEY` of the server's environment.
     */
    apiKey?: string | null;
    /**
     * `chat` (the default) or `completions`.
     */
    endpoint?: string | null;
    [key: string]: unknown;
  } | null;
  /**
   * `simulator` under the name the bundled clients send.
   */
  endpoint?: {
    baseUrl?: string | null;
    model?: string | null;
    /**
     * Else `OPENAI_API_KEY` of the server's environment.
     */
    apiKey?: string | null;
    /**
     * `chat` (the default) or `completions`.
     */
    endpoint?: string | null;
    [key: string]: unknown;
  } | null;
  [key: string]: unknown;
};

export interface CommandArgs {
  'pivot.conversation.open': ConversationOpenArgs;
  'pivot.conversation.close': ConversationCloseArgs;
  'pivot.conversation.info': ConversationInfoArgs;
  'pivot.session.next': SessionNextArgs;
  'pivot.session.previous': SessionPreviousArgs;
  'pivot.session.goto': SessionGotoArgs;
  'pivot.session.transcript': SessionTranscriptArgs;
  'pivot.session.timeline': SessionTimelineArgs;
  'pivot.pivots.active': PivotsActiveArgs;
  'pivot.pivots.add': PivotsAddArgs;
  'pivot.pivots.remove': PivotsRemoveArgs;
  'pivot.pivots.reload': PivotsReloadArgs;
  'pivot.outputs.check': OutputsCheckArgs;
  'pivot.evaluate.memorycode': EvaluateMemorycodeArgs;
  'pivot.document.inspect': DocumentInspectArgs;
  'pivot.tests.run': TestsRunArgs;
  'pivot.turn.feedback': TurnFeedbackArgs;
  'pivot.turn.submit': TurnSubmitArgs;
  'pivot.memorycode.generate': MemorycodeGenerateArgs;
  'pivot.evaluate.convcode': EvaluateConvcodeArgs;
  'pivot.report.open': ReportOpenArgs;
  'pivot/headless/setup': HeadlessSetupArgs;
  'pivot/memorycode/answers': MemorycodeAnswersArgs;
}

export interface CommandReply {
  'pivot.conversation.open': ConversationOpenReply;
  'pivot.conversation.close': ConversationCloseReply;
  'pivot.conversation.info': ConversationInfoReply;
  'pivot.session.next': SessionNextReply;
  'pivot.session.previous': SessionPreviousReply;
  'pivot.session.goto': SessionGotoReply;
  'pivot.session.transcript': SessionTranscriptReply;
  'pivot.session.timeline': SessionTimelineReply;
  'pivot.pivots.active': PivotsActiveReply;
  'pivot.pivots.add': PivotsAddReply;
  'pivot.pivots.remove': PivotsRemoveReply;
  'pivot.pivots.reload': PivotsReloadReply;
  'pivot.outputs.check': OutputsCheckReply;
  'pivot.evaluate.memorycode': EvaluateMemorycodeReply;
  'pivot.document.inspect': DocumentInspectReply;
  'pivot.tests.run': TestsRunReply;
  'pivot.turn.feedback': TurnFeedbackReply;
  'pivot.turn.submit': TurnSubmitReply;
  'pivot.memorycode.generate': MemorycodeGenerateReply;
  'pivot.evaluate.convcode': EvaluateConvcodeReply;
  'pivot.report.open': ReportOpenReply;
  'pivot/headless/setup': HeadlessSetupReply;
  'pivot/memorycode/answers': MemorycodeAnswersReply;
}
