-- Choir: the chat app's schema (threads with the FQAHO parameters k0, alpha, m; messages
-- with 1536-dimension embeddings; parameter history) and its semantic recall, as libSQL
-- SQL running on stock SQLite with VecSync loaded:
--   sqlite3 choir.db -cmd '.load .build/libvecsync' < sql/choir.sql
.headers on
.mode box

-- The schema: MessageStore creates the same, with its own dimension count (a test keeps
-- the two identical).
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  name TEXT,
  last_active INTEGER
);
CREATE TABLE IF NOT EXISTS threads (
  id TEXT PRIMARY KEY,
  title TEXT,
  created_at INTEGER,
  updated_at INTEGER,
  k0 REAL,           -- FQAHO K0
  alpha REAL,        -- FQAHO alpha (fractional)
  m REAL             -- FQAHO m
);
CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY,
  thread_id TEXT REFERENCES threads(id),
  user_id TEXT REFERENCES users(id),
  content TEXT,
  embedding F32_BLOB(1536),  -- float32, 4 bytes an element
  phase TEXT,        -- Post Chain phase
  created_at INTEGER,
  approval_status TEXT
);
CREATE INDEX IF NOT EXISTS messages_thread_idx ON messages(thread_id, approval_status);
CREATE INDEX IF NOT EXISTS messages_embedding_idx
  ON messages(libsql_vector_idx(embedding, 'metric=cosine'));
CREATE TABLE IF NOT EXISTS parameter_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id TEXT REFERENCES threads(id),
  timestamp INTEGER,
  k0 REAL,
  alpha REAL,
  m REAL,
  event_type TEXT
);
CREATE INDEX IF NOT EXISTS parameter_history_thread_idx ON parameter_history(thread_id, timestamp);
-- End of the schema.

-- Synthetic 1536-d embeddings: a message about topic t has weight on dimensions
-- congruent to t mod 4, plus a little of its neighbour topic.
create temp view topic_vectors(topic, embedding) as
  with recursive d(n) as (select 0 union all select n + 1 from d where n < 1535),
       t(topic) as (values (0), (1), (2), (3))
  select topic, vector32('[' || group_concat(
           case when n % 4 = topic then 1.0
                when n % 4 = (topic + 1) % 4 then 0.15 else 0.0 end, ',') || ']')
    from t, d group by topic;

insert into users values ('u1', 'Ada', 1700000000), ('u2', 'Grace', 1700000000);
insert into threads values ('t1', 'Trip to Japan', 1700000000, 1700000000, 1.0, 1.5, 1.0),
                           ('t2', 'Bread baking', 1700000000, 1700000000, 1.0, 1.5, 1.0);
insert into parameter_history(thread_id, timestamp, k0, alpha, m, event_type)
  values ('t1', 1700000000, 1.0, 1.5, 1.0, 'thread_creation'),
         ('t2', 1700000000, 1.0, 1.5, 1.0, 'thread_creation');
with m(id, thread_id, user_id, content, topic, phase, created_at, approval_status) as (
  values ('m1', 't1', 'u1', 'Kyoto temples at dawn', 0, 'experience', 1700000001, 'approved'),
         ('m2', 't1', 'u2', 'Which rail pass?',      1, 'action',     1700000002, 'approved'),
         ('m3', 't2', 'u1', 'Starter too runny',     2, 'experience', 1700000003, 'approved'),
         ('m4', 't1', 'u1', 'Temple stay booking',   0, 'experience', 1700000004, 'pending'))
insert into messages
  select m.id, m.thread_id, m.user_id, m.content, v.embedding, m.phase, m.created_at,
         m.approval_status
    from m join topic_vectors as v on v.topic = m.topic
   order by m.id;

.print Messages of thread t1 most like a "temples" query (approved only):
select m.id, m.content, round(v.distance, 4) as distance
  from vector_top_k('messages_embedding_idx',
                    (select embedding from topic_vectors where topic = 0), 5) as v
  join messages m on m.rowid = v.id
 where m.thread_id = 't1' and m.approval_status = 'approved';

.print Approving m4 nudges the thread's parameters (k0 +0.05, alpha +0.02, m -0.01):
update messages set approval_status = 'approved' where id = 'm4';
update threads set k0 = min(10, k0 + 0.05), alpha = min(2, alpha + 0.02),
                   m = max(0.5, m - 0.01), updated_at = 1700000005 where id = 't1';
insert into parameter_history(thread_id, timestamp, k0, alpha, m, event_type)
  select id, updated_at, k0, alpha, m, 'approval' from threads where id = 't1';
select thread_id, timestamp, k0, alpha, m, event_type from parameter_history order by id;
