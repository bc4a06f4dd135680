/* decide: 10 trees of depth 4 as if/else, as nicc's codegen prints trees, over eight int32
 * features (thresholds and Q12 leaves drawn once from a fixed seed), summed in an int32
 * accumulator, rounded once to a Q8 action, mapped to a Q16 rate multiplier and applied to the
 * fxp20 rate in the flow context with a clamp to (0, 1<<20]. The decision of fwsim's
 * BenchmarkDecision, of the C referee (decision_case.c) and of fwsim/wcet's TestWCETDecision. */
#include <stdint.h>

static int32_t tree0(const int32_t *f)
{
	if (f[7] < -186889) {
		if (f[2] < 486214416) {
			if (f[6] < 446492) {
				if (f[5] < 1020409) {
					return -1975;
				} else {
					return 749;
				}
			} else {
				if (f[2] < -115108) {
					return -1296;
				} else {
					return 2234;
				}
			}
		} else {
			if (f[7] < -875) {
				if (f[2] < -316182) {
					return -801;
				} else {
					return -69;
				}
			} else {
				if (f[6] < 501848) {
					return -711;
				} else {
					return 387;
				}
			}
		}
	} else {
		if (f[2] < 1070595352) {
			if (f[4] < -187359618) {
				if (f[1] < 901099) {
					return 907;
				} else {
					return 1408;
				}
			} else {
				if (f[0] < -858628) {
					return -1801;
				} else {
					return 179;
				}
			}
		} else {
			if (f[6] < 361599) {
				if (f[5] < -333) {
					return 1270;
				} else {
					return -928;
				}
			} else {
				if (f[4] < -195516) {
					return 2295;
				} else {
					return -2449;
				}
			}
		}
	}
}

static int32_t tree1(const int32_t *f)
{
	if (f[0] < 372292) {
		if (f[7] < -682898084) {
			if (f[4] < -730286) {
				if (f[1] < -752) {
					return 125;
				} else {
					return -1289;
				}
			} else {
				if (f[5] < -375577) {
					return -2030;
				} else {
					return 1963;
				}
			}
		} else {
			if (f[1] < -103695) {
				if (f[3] < -451) {
					return -2018;
				} else {
					return 1363;
				}
			} else {
				if (f[3] < 1032713) {
					return -824;
				} else {
					return -2394;
				}
			}
		}
	} else {
		if (f[3] < 139685) {
			if (f[1] < 744811) {
				if (f[2] < 781248803) {
					return -2533;
				} else {
					return 2344;
				}
			} else {
				if (f[2] < -825185460) {
					return 364;
				} else {
					return 2137;
				}
			}
		} else {
			if (f[2] < -490636) {
				if (f[3] < -750) {
					return -2605;
				} else {
					return 1536;
				}
			} else {
				if (f[0] < -505) {
					return 1828;
				} else {
					return -2875;
				}
			}
		}
	}
}

static int32_t tree2(const int32_t *f)
{
	if (f[1] < 692873) {
		if (f[4] < 835) {
			if (f[6] < -230604532) {
				if (f[0] < -805) {
					return -1784;
				} else {
					return 2245;
				}
			} else {
				if (f[7] < 971107) {
					return 1939;
				} else {
					return -2025;
				}
			}
		} else {
			if (f[6] < -667488) {
				if (f[2] < -393933) {
					return 86;
				} else {
					return 1137;
				}
			} else {
				if (f[6] < 989) {
					return -2065;
				} else {
					return 2815;
				}
			}
		}
	} else {
		if (f[2] < 128) {
			if (f[1] < 600345606) {
				if (f[5] < -533) {
					return 1378;
				} else {
					return -2444;
				}
			} else {
				if (f[5] < 1017415572) {
					return 804;
				} else {
					return -1946;
				}
			}
		} else {
			if (f[6] < 687243) {
				if (f[5] < 407275) {
					return -2166;
				} else {
					return 2069;
				}
			} else {
				if (f[6] < 602710) {
					return -2294;
				} else {
					return 2564;
				}
			}
		}
	}
}

static int32_t tree3(const int32_t *f)
{
	if (f[7] < 107398916) {
		if (f[5] < 679809) {
			if (f[5] < 866163) {
				if (f[5] < -391961) {
					return 730;
				} else {
					return 187;
				}
			} else {
				if (f[1] < 582) {
					return 1828;
				} else {
					return -2504;
				}
			}
		} else {
			if (f[2] < -764229) {
				if (f[0] < 374040498) {
					return 207;
				} else {
					return -2529;
				}
			} else {
				if (f[0] < 197545) {
					return -889;
				} else {
					return -2958;
				}
			}
		}
	} else {
		if (f[0] < 892) {
			if (f[2] < -369122920) {
				if (f[1] < -19370) {
					return 984;
				} else {
					return 2148;
				}
			} else {
				if (f[7] < 987) {
					return -1710;
				} else {
					return -757;
				}
			}
		} else {
			if (f[4] < 1002704) {
				if (f[4] < -6) {
					return -852;
				} else {
					return -2264;
				}
			} else {
				if (f[6] < 207) {
					return -2668;
				} else {
					return 1774;
				}
			}
		}
	}
}

static int32_t tree4(const int32_t *f)
{
	if (f[5] < 795393318) {
		if (f[0] < -791725818) {
			if (f[2] < -526453) {
				if (f[2] < -592) {
					return -84;
				} else {
					return -1703;
				}
			} else {
				if (f[7] < 147650) {
					return 44;
				} else {
					return -2546;
				}
			}
		} else {
			if (f[3] < 578085763) {
				if (f[4] < 553646) {
					return 2981;
				} else {
					return -2416;
				}
			} else {
				if (f[6] < -66) {
					return 2645;
				} else {
					return -1825;
				}
			}
		}
	} else {
		if (f[7] < 368105099) {
			if (f[6] < 461150) {
				if (f[3] < 1017934) {
					return 210;
				} else {
					return -2329;
				}
			} else {
				if (f[7] < -192213) {
					return 954;
				} else {
					return -1486;
				}
			}
		} else {
			if (f[1] < 727) {
				if (f[0] < 710097481) {
					return 2162;
				} else {
					return -992;
				}
			} else {
				if (f[1] < -1025011) {
					return -257;
				} else {
					return -1260;
				}
			}
		}
	}
}

static int32_t tree5(const int32_t *f)
{
	if (f[6] < 130282) {
		if (f[6] < 980163964) {
			if (f[2] < -780946315) {
				if (f[7] < 166) {
					return -2411;
				} else {
					return 2122;
				}
			} else {
				if (f[0] < 605) {
					return -169;
				} else {
					return -2565;
				}
			}
		} else {
			if (f[5] < -867175) {
				if (f[7] < 616240297) {
					return -89;
				} else {
					return 2611;
				}
			} else {
				if (f[6] < 65) {
					return -680;
				} else {
					return -2883;
				}
			}
		}
	} else {
		if (f[4] < -866234) {
			if (f[4] < 884) {
				if (f[7] < -621648262) {
					return 1325;
				} else {
					return 2436;
				}
			} else {
				if (f[5] < 494999) {
					return -2412;
				} else {
					return -309;
				}
			}
		} else {
			if (f[3] < 285150) {
				if (f[3] < -380559850) {
					return -2038;
				} else {
					return -180;
				}
			} else {
				if (f[1] < -903234) {
					return -728;
				} else {
					return -2305;
				}
			}
		}
	}
}

static int32_t tree6(const int32_t *f)
{
	if (f[7] < -228661) {
		if (f[3] < -777971586) {
			if (f[3] < -355) {
				if (f[6] < -242950341) {
					return -2184;
				} else {
					return 2553;
				}
			} else {
				if (f[3] < 499051) {
					return 860;
				} else {
					return -1451;
				}
			}
		} else {
			if (f[6] < -588877) {
				if (f[2] < -837682) {
					return -775;
				} else {
					return -1903;
				}
			} else {
				if (f[0] < 369) {
					return 1110;
				} else {
					return -2813;
				}
			}
		}
	} else {
		if (f[7] < 706) {
			if (f[1] < -396606) {
				if (f[4] < -971077579) {
					return 1558;
				} else {
					return 468;
				}
			} else {
				if (f[6] < -1014352) {
					return 53;
				} else {
					return 994;
				}
			}
		} else {
			if (f[6] < 915720) {
				if (f[7] < 714812449) {
					return -2800;
				} else {
					return 2803;
				}
			} else {
				if (f[1] < -624928090) {
					return 346;
				} else {
					return -472;
				}
			}
		}
	}
}

static int32_t tree7(const int32_t *f)
{
	if (f[6] < 738618753) {
		if (f[1] < -201) {
			if (f[1] < 723032) {
				if (f[0] < -851301514) {
					return 2274;
				} else {
					return 1955;
				}
			} else {
				if (f[3] < 778470927) {
					return -1349;
				} else {
					return 248;
				}
			}
		} else {
			if (f[2] < 801726) {
				if (f[3] < -922704) {
					return 617;
				} else {
					return 378;
				}
			} else {
				if (f[0] < 191) {
					return 2204;
				} else {
					return 1532;
				}
			}
		}
	} else {
		if (f[0] < 480605) {
			if (f[5] < -600714) {
				if (f[4] < 184) {
					return 484;
				} else {
					return -2681;
				}
			} else {
				if (f[5] < -1018742808) {
					return 1544;
				} else {
					return -830;
				}
			}
		} else {
			if (f[6] < 367935) {
				if (f[7] < 87) {
					return -1095;
				} else {
					return -1216;
				}
			} else {
				if (f[0] < 451692) {
					return -2213;
				} else {
					return 558;
				}
			}
		}
	}
}

static int32_t tree8(const int32_t *f)
{
	if (f[4] < 215813) {
		if (f[7] < -233639) {
			if (f[7] < -31596534) {
				if (f[5] < 222) {
					return -936;
				} else {
					return -578;
				}
			} else {
				if (f[6] < -81) {
					return 2281;
				} else {
					return 1587;
				}
			}
		} else {
			if (f[2] < -1028802) {
				if (f[3] < 302991) {
					return 2404;
				} else {
					return -837;
				}
			} else {
				if (f[3] < 785060488) {
					return 2378;
				} else {
					return 2602;
				}
			}
		}
	} else {
		if (f[6] < -523750679) {
			if (f[1] < 500373537) {
				if (f[1] < 1017025) {
					return -988;
				} else {
					return -2688;
				}
			} else {
				if (f[7] < -402376) {
					return -862;
				} else {
					return -253;
				}
			}
		} else {
			if (f[1] < 114) {
				if (f[4] < -266557516) {
					return -1761;
				} else {
					return -2554;
				}
			} else {
				if (f[5] < 165902) {
					return -1289;
				} else {
					return 2473;
				}
			}
		}
	}
}

static int32_t tree9(const int32_t *f)
{
	if (f[5] < 824301) {
		if (f[6] < -1018961955) {
			if (f[6] < 518767359) {
				if (f[2] < 216867) {
					return 2720;
				} else {
					return 2573;
				}
			} else {
				if (f[7] < -410136) {
					return 1287;
				} else {
					return 2802;
				}
			}
		} else {
			if (f[5] < 299532) {
				if (f[2] < 808) {
					return -2004;
				} else {
					return 2955;
				}
			} else {
				if (f[2] < -745382) {
					return -1371;
				} else {
					return 2221;
				}
			}
		}
	} else {
		if (f[5] < 921907058) {
			if (f[1] < -685730) {
				if (f[3] < -744895) {
					return -2127;
				} else {
					return 1808;
				}
			} else {
				if (f[7] < -449943410) {
					return 396;
				} else {
					return 1254;
				}
			}
		} else {
			if (f[3] < -852) {
				if (f[0] < 57747) {
					return 2518;
				} else {
					return 1950;
				}
			} else {
				if (f[2] < -358164) {
					return 339;
				} else {
					return -1458;
				}
			}
		}
	}
}

uint32_t decide(const int32_t *f, uint32_t *ctx)
{
	int32_t acc = 0;
	acc += tree0(f);
	acc += tree1(f);
	acc += tree2(f);
	acc += tree3(f);
	acc += tree4(f);
	acc += tree5(f);
	acc += tree6(f);
	acc += tree7(f);
	acc += tree8(f);
	acc += tree9(f);
	/* round once: Q12 sum to a Q8 action in [-256, 256] */
	int32_t y = (acc + (1 << 3)) >> 4;
	if (y > 256)
		y = 256;
	if (y < -256)
		y = -256;
	/* rate multiplier in Q16: about 1 + 0.2 y for y >= 0, 1 / (1 - 0.2 y) below */
	uint32_t mult = y >= 0 ? 65536u + (uint32_t)y * 51u : 65536u - (uint32_t)(-y) * 42u;
	uint64_t next = ((uint64_t)ctx[0] * mult) >> 16;
	if (next < 1)
		next = 1;
	if (next > (1u << 20))
		next = 1u << 20;
	ctx[0] = (uint32_t)next;
	ctx[1] += 1;
	ctx[2] = (uint32_t)y;
	return (uint32_t)next;
}
