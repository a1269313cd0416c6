"""Template families, one list per family; dev and test use disjoint families so test
phrasings are never seen while tuning. Slots: {NAME} {SURNAME} (before a title) {ADDRESS}
{HOSPITAL} {DATE} {PHONE} {ID} {EMAIL} {URL} {MRN} {ORDER} {CITY} (context, kept) and
clinical slots {DRUG} {DISEASE} {LAB} {DOSE} {DUR} {REL} {AGE} that must survive masking."""

from __future__ import annotations

DEV_FAMILIES: dict[str, list[str]] = {
    "patient_chat_a": [
        "医生您好，我是{NAME}，{AGE}，{DISEASE}{DUR}了，之前在{HOSPITAL}看过。",
        "我家住{CITY}{ADDRESS}，离{HOSPITAL}比较近，可以去那边复查吗",
        "谢谢{SURNAME}主任！吃了{DRUG}{DUR}，好多了",
        "麻烦帮我看下报告，{REL}刚抽的血，{LAB}",
        "我的手机{PHONE}，有结果麻烦通知一下",
        "我妈妈{NAME}，{AGE}，{DISEASE}，{REL}开始头晕",
        "@{NAME} 你把身份证号{ID}发给医生",
        "{DATE}做的胃镜，结果说是{DISEASE}",
        "小孩叫{NAME}，{AGE}，发烧{DUR}，{DRUG}{DOSE}吃了两次",
        "订单号{ORDER}，药还没收到，能帮忙查下吗",
        "我老公{NAME}在{HOSPITAL}住院，住院号{MRN}",
        "邮箱{EMAIL}，报告麻烦发我一下，谢谢",
    ],
    "physician_a": [
        "{NAME}你好，根据你{DATE}的化验，{LAB}，建议继续{DRUG}{DOSE}。",
        "建议到{HOSPITAL}做个增强CT，{DISEASE}需要排除。",
        "这个情况{REL}再观察一下，{DRUG}{DOSE}，用{DUR}。",
        "可以联系我们科室电话{PHONE}预约，周三上午{SURNAME}医生门诊。",
        "你好{NAME}，{DISEASE}一般预后良好，{DUR}后复查。",
        "复查结果可以在{URL}查询，病历号{MRN}。",
    ],
    "ocr_lab_a": [
        "姓名:{NAME} 性别:女 年龄:{AGE} 病历号:{MRN}",
        "送检医生：{NAME}  采样时间：{DATE}",
        "{HOSPITAL}检验报告单",
        "受检者 {NAME}   科室 内分泌科   床号 12",
        "检验项目 {LAB}  参考范围 见附表",
        "报告日期{DATE} 审核者:{NAME}",
    ],
    "ocr_invoice_a": [
        "交款人：{NAME}  收费日期：{DATE}",
        "{HOSPITAL}门诊收费票据  票据号{ORDER}",
        "就诊人:{NAME} 身份证:{ID}",
        "住址：{CITY}{ADDRESS}  联系电话：{PHONE}",
        "药品名称 {DRUG} 规格 {DOSE} 数量 2盒",
    ],
}

TEST_FAMILIES: dict[str, list[str]] = {
    "patient_chat_b": [
        "大夫，俺是{ADDRESS}的，{DISEASE}好几年了，{REL}又犯了",
        "感谢{SURNAME}大夫！{DRUG}吃完{DUR}症状缓解了",
        "我爸{NAME}今年{AGE}，上次去{HOSPITAL}拍的片子说是{DISEASE}",
        "家里座机{PHONE}，白天没人接就打这个",
        "我闺女{NAME}，{AGE}，{REL}开始咳嗽，吃了{DRUG}",
        "哦哦好的，那我{DATE}去{HOSPITAL}挂号",
        "这是我的证件号{ID}，麻烦帮忙开个证明",
        "快递单号{ORDER}显示已签收，但我没拿到药",
        "在{HOSPITAL}查的{LAB}，要紧不",
        "我微信绑的邮箱是{EMAIL}",
        "{NAME}是我媳妇，她{DISEASE}{DUR}了，一直吃{DRUG}",
        "出生日期{DATE}，{AGE}，以前没得过{DISEASE}",
    ],
    "physician_b": [
        "{NAME}家属您好，{LAB}偏高，{DRUG}{DOSE}口服。",
        "考虑{DISEASE}可能性大，建议去{HOSPITAL}进一步检查。",
        "好的{NAME}，{REL}的症状记录一下，{DUR}后复诊。",
        "有问题可以打我们护士站{PHONE}，或者找{SURNAME}护士长。",
        "报告已上传到{URL}，门诊号{MRN}。",
        "{DATE}的结果看，{LAB}，{DISEASE}控制尚可。",
    ],
    "ocr_prescription_b": [
        "{HOSPITAL} 处方笺",
        "患者姓名 {NAME} 年龄 {AGE} 门诊号 {MRN}",
        "Rp: {DRUG} {DOSE} tid × {DUR}",
        "开具日期{DATE}  医师 {NAME}",
        "地址 {ADDRESS}  电话 {PHONE}",
        "临床诊断：{DISEASE}",
    ],
    "ocr_report_b": [
        "检查者:{NAME} 检查时间:{DATE}",
        "{HOSPITAL}医学影像报告",
        "申请医生 {NAME}  登记号{MRN}",
        "结论：{DISEASE}  {LAB}",
        "打印时间{DATE}",
        "缴费人 {NAME} 金额 56.00元 流水号{ORDER}",
    ],
}

# Compositional builder parts (one pool per half): opener + identifier clause + clinical tail.
BUILDER = {
    "dev": {
        "opener": ["嗯，", "您好，", "医生，", "补充一下，", "", "对了，"],
        "clause": [
            "我叫{NAME}",
            "病人是{NAME}",
            "住在{ADDRESS}",
            "在{HOSPITAL}做的检查",
            "电话{PHONE}",
            "{DATE}那天开始的",
            "身份证{ID}",
            "{SURNAME}主任说",
        ],
        "tail": ["，{DISEASE}", "，{LAB}", "，吃的{DRUG}{DOSE}", "，{DUR}了", "。", "，{REL}加重"],
    },
    "test": {
        "opener": ["喂，", "大夫好，", "哎，", "再问一下，", "", "是这样的，"],
        "clause": [
            "本人{NAME}",
            "患儿{NAME}",
            "地址是{ADDRESS}",
            "之前{HOSPITAL}的医生看过",
            "号码{PHONE}",
            "从{DATE}起",
            "证件号码{ID}",
            "跟{SURNAME}老师确认过",
        ],
        "tail": [
            "，诊断{DISEASE}",
            "，复查{LAB}",
            "，用了{DRUG}",
            "，已经{DUR}",
            "！",
            "，{REL}没好",
        ],
    },
}

CLINICAL = {
    "DRUG": "阿莫西林 布洛芬 二甲双胍 黄连素 金银花颗粒 王老吉 高血压片 连花清瘟 左氧氟沙星 "
    "阿司匹林 甲钴胺 白加黑 马应龙痔疮膏 云南白药 安宫牛黄丸 胡椒粉 杨枝甘露 石斛 龙胆泻肝丸 "
    "孟鲁司特 蒙脱石散 江中健胃消食片 葛根汤 柴胡颗粒 何首乌 田七 丁桂儿脐贴 康复新液",
    "DISEASE": "高血压 糖尿病 高血脂 甲状腺结节 胃炎 黄疸 白癜风 牛皮癣 石淋 冠心病 "
    "乳腺增生 马蹄内翻足 杨梅舌 丹毒 湿疹 宫颈糜烂 房颤 肾结石 梅毒 干眼症",
    "LAB": "白细胞12.5×10^9/L 血红蛋白98g/L 空腹血糖7.8mmol/L 谷丙转氨酶86U/L "
    "肌酐132μmol/L TSH 6.2mIU/L 尿酸520μmol/L 血小板89×10^9/L HbA1c 8.1% CRP 35mg/L",
    "DOSE": "0.5g 10mg 一日三次 每次2粒 500mg 5ml 一天两次 1片 20mg 0.25g",
    "DUR": "三天 两周 半个月 3个月 一年多 5天 十来天 2周 六个月 一个礼拜",
    "REL": "今天 昨天 前天 上周 昨晚 今早 上个月 大前天 这两天 刚才",
    "AGE": "35岁 8个月 62岁 3岁半 47岁 71岁 19岁 5岁 28岁 80岁",
}

CLINICAL_ONLY = {
    "dev": [
        "{DISEASE}的话{DRUG}可以吃吗，{DOSE}够不够",
        "{REL}测了一下{LAB}，需要调药吗",
        "{AGE}，{DISEASE}{DUR}了，一直在吃{DRUG}",
        "建议{DRUG}{DOSE}，{DUR}后复查{LAB}",
        "喝{DRUG}能缓解{DISEASE}吗？",
    ],
    "test": [
        "{DRUG}和{DRUG}能一起用吗",
        "{LAB}，是不是{DISEASE}",
        "{REL}开始的，{DUR}，{AGE}",
        "先用{DRUG}{DOSE}，不行再说",
        "{DISEASE}患者注意饮食，{DRUG}按时吃",
    ],
}
