"""The augment job: K random symmetries of every puzzle and its solution (`batch`: one batch;
`job`: a file, `augment_file`; `frame`: a DataFrame, `augment`)."""
