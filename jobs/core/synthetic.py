"""The synthetic data set's one constant every side reads: the test batch a training cell's synthetic
set holds (jobs.runtime.data writes it; jobs.train.cell bounds its test_images by it)."""

SYNTHETIC_TEST_IMAGES = 100
