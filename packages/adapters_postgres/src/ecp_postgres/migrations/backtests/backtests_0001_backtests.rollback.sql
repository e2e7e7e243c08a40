DROP TABLE ecp_backtest_inputs;
DROP TABLE ecp_backtests;
