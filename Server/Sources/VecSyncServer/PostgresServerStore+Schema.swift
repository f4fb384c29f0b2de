extension PostgresServerStore {
    /// The store's tables, in the order ``prepare()`` creates them (one statement a query: the
    /// extended protocol takes one at a time). Every statement may run again on a store that
    /// has them: a store made by an earlier version gets what it lacks.
    static let schema: [String] = [
        """
        CREATE TABLE IF NOT EXISTS store (
          key TEXT PRIMARY KEY,
          value TEXT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS spaces (
          id BIGSERIAL PRIMARY KEY,
          name TEXT NOT NULL UNIQUE,
          created_at BIGINT NOT NULL,
          last_seq BIGINT NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS tokens (
          id TEXT PRIMARY KEY,
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          hash TEXT NOT NULL UNIQUE,
          label TEXT NOT NULL,
          created_at BIGINT NOT NULL,
          revoked_at BIGINT,
          device TEXT)
        """,
        // Stores made before device tokens lack the column.
        "ALTER TABLE tokens ADD COLUMN IF NOT EXISTS device TEXT",
        """
        CREATE TABLE IF NOT EXISTS rate_buckets (
          key TEXT PRIMARY KEY,
          tokens DOUBLE PRECISION NOT NULL,
          updated_at BIGINT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS devices (
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          site TEXT NOT NULL,
          name TEXT NOT NULL,
          platform TEXT NOT NULL,
          registered_at BIGINT NOT NULL,
          last_push_at BIGINT,
          last_pull_at BIGINT,
          head BIGINT NOT NULL DEFAULT 0,
          change_sets BIGINT NOT NULL DEFAULT 0,
          rows BIGINT NOT NULL DEFAULT 0,
          bytes BIGINT NOT NULL DEFAULT 0,
          PRIMARY KEY (space_id, site))
        """,
        """
        CREATE TABLE IF NOT EXISTS change_sets (
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          seq BIGINT NOT NULL,
          origin TEXT NOT NULL,
          since BIGINT NOT NULL,
          through BIGINT NOT NULL,
          rows BIGINT NOT NULL,
          size BIGINT NOT NULL,
          sha256 TEXT NOT NULL,
          received_at BIGINT NOT NULL,
          body BYTEA NOT NULL,
          PRIMARY KEY (space_id, seq),
          UNIQUE (space_id, origin, since, through))
        """,
        "ALTER TABLE devices ADD COLUMN IF NOT EXISTS pulled_through BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE devices ADD COLUMN IF NOT EXISTS owner_token TEXT",
        // Stores made before damaged change sets were recorded lack their mark (and the
        // index of the marked ones, which every status request lists).
        "ALTER TABLE change_sets ADD COLUMN IF NOT EXISTS damaged BOOLEAN NOT NULL DEFAULT false",
        "CREATE INDEX IF NOT EXISTS change_sets_damaged ON change_sets (space_id, seq) WHERE damaged",
        """
        CREATE TABLE IF NOT EXISTS snapshots (
          space_id BIGINT PRIMARY KEY REFERENCES spaces(id),
          seq BIGINT NOT NULL,
          heads TEXT NOT NULL,
          rows BIGINT NOT NULL,
          size BIGINT NOT NULL,
          sha256 TEXT NOT NULL,
          created_at BIGINT NOT NULL,
          compacted_through BIGINT NOT NULL DEFAULT 0,
          body BYTEA NOT NULL)
        """,
        // Snapshots made in parts: their entries (stores made before lack the column) and bytes.
        "ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS parts TEXT",
        """
        CREATE TABLE IF NOT EXISTS snapshot_parts (
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          seq BIGINT NOT NULL,
          part INTEGER NOT NULL,
          body BYTEA NOT NULL,
          PRIMARY KEY (space_id, seq, part))
        """,
        // Attested writes (WriteAttestation) and authority counts.
        """
        CREATE TABLE IF NOT EXISTS attested_writes (
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          digest TEXT NOT NULL,
          PRIMARY KEY (space_id, digest))
        """,
        """
        CREATE TABLE IF NOT EXISTS authority_counts (
          space_id BIGINT NOT NULL REFERENCES spaces(id),
          cell TEXT NOT NULL,
          count BIGINT NOT NULL,
          PRIMARY KEY (space_id, cell))
        """,
    ]
}
