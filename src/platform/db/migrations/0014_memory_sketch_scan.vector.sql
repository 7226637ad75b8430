-- Memory retrieval with pgvector (issue 3): nothing to change. The covering indexes of the
-- variant without pgvector serve its Hamming scan over sketches, which this variant does not have.
select 1;
