/** What an endpoint's circuit remembers: kept when its user's partition moves, so the next owner starts from it. */
export interface CircuitState {
  /** Unreachable attempts in a row. */
  readonly failures: number;
  /** Open until then (a probe goes out at or after it); null when closed. */
  readonly openUntil: number | null;
  /** The cool-down of the last opening (doubled by each failed probe). */
  readonly coolDownMs: number;
  readonly lastFailureAt: number;
}

/** One user's circuit for one host (name and port), as kept for the next owner; `state` null: nothing worth keeping. */
export interface KeptCircuit {
  readonly userId: number;
  readonly host: string;
  readonly state: CircuitState | null;
  /** From when the state no longer matters (kept until then at most). */
  readonly forgetAfter: number;
}
