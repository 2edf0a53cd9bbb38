-- Reserved: another change takes this number.
SELECT 1;
