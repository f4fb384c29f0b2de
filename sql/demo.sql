-- VecSync demo: run by `make demo` in the sqlite3 shell, after
--   .load .build/libvecsync
-- Paste any of it into your own shell after the same .load line.
.headers on
.mode box

-- 1. Vectors as libSQL writes them: F32 blobs, 4 bytes an element.
select vector_extract(vector32('[1, 2.5, -3e-2]')) as "vector_extract(vector32(...))";
select vector_distance_cos(vector32('[1,0]'), vector32('[0,1]')) as cosine_distance,
       vector_distance_l2(vector32('[0,0]'), vector32('[3,4]'))  as l2_distance;

-- 2. libSQL's schema and vector index, on stock SQLite.
create table notes (
  id        text primary key,
  topic     text,
  body      text,
  embedding F32_BLOB(4)          -- a declared type: 4 float32 elements
);
create index notes_embedding_idx on notes(libsql_vector_idx(embedding, 'metric=cosine'));
insert into notes values
  ('n1', 'travel',  'Temples of Kyoto at dawn',        vector32('[0.90, 0.10, 0.00, 0.05]')),
  ('n2', 'travel',  'Night train to Osaka',            vector32('[0.80, 0.20, 0.10, 0.00]')),
  ('n3', 'cooking', 'Miso soup, the quick way',        vector32('[0.10, 0.90, 0.05, 0.00]')),
  ('n4', 'cooking', 'Sourdough starter notes',         vector32('[0.00, 0.80, 0.30, 0.10]')),
  ('n5', 'music',   'Chord voicings for jazz guitar',  vector32('[0.05, 0.00, 0.10, 0.95]')),
  ('n6', 'travel',  'Packing list for Hokkaido',       vector32('[0.85, 0.05, 0.20, 0.00]'));

.print
.print Nearest notes to a "Japan trip" query, with vector_top_k:
select n.id, n.body, round(v.distance, 4) as distance
  from vector_top_k('notes_embedding_idx', vector32('[0.9, 0.1, 0.1, 0.0]'), 3) as v
  join notes n on n.rowid = v.id;

-- 3. sqlite-vec's vec0 table: metadata filters inside the KNN search.
create virtual table vec_photos using vec0(
  photo_id  text primary key,
  embedding float[4] distance_metric=cosine,
  album     text,
  taken_at  integer,
  +caption  text
);
insert into vec_photos(photo_id, embedding, album, taken_at, caption) values
  ('PH-1', '[0.9, 0.1, 0.0, 0.0]', 'Japan',  1700000100, 'Fushimi Inari gates'),
  ('PH-2', '[0.8, 0.2, 0.1, 0.0]', 'Japan',  1690000000, 'Shinkansen platform'),
  ('PH-3', '[0.1, 0.9, 0.0, 0.1]', 'Kitchen',1700000200, 'Bread crumb shot'),
  ('PH-4', '[0.7, 0.0, 0.3, 0.1]', 'Japan',  1700000300, 'Snow in Sapporo'),
  ('PH-5', '[0.0, 0.1, 0.1, 0.9]', 'Gigs',   1700000400, 'Jazz club stage');

.print
.print Photos like a temple picture, in the Japan album, taken after 1700000000:
select photo_id, caption, round(distance, 4) as distance
  from vec_photos
 where embedding match '[0.9, 0.1, 0.0, 0.0]' and k = 2
   and album = 'Japan' and taken_at > 1700000000
 order by distance;

.print
.print Many queries in one pass (one sgemm per block); the queries blob is their
.print float32 elements end to end, so two 4-d queries are one 8-element vector32:
select query_index, id, round(distance, 4) as distance
  from vecsync_knn_batch('vec_photos', vector32('[1,0,0,0,  0,0,0,1]'), 2);

.print
select vecsync_debug() as "vecsync_debug()";
