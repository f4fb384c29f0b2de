-- VecSync demo, part 2: bad input is an error that names the problem, and writes nothing.
-- Run by `make demo` after sql/demo.sql; every statement after the table fails on purpose
-- (k = 0 is no error: it asks for no rows, as in sqlite-vec).
create virtual table vec_photos using vec0(photo_id text primary key, embedding float[4]);
.print Bad input is an error that names the problem:
select vector32('[1,,2]');
select vector32('[1e39]');
select vector_distance_cos('[1,2]', '[1,2,3]');
insert into vec_photos(photo_id, embedding) values ('PH-9', '[1, 2]');
select photo_id from vec_photos where embedding match '[1,0,0,0]' and k = -1;
